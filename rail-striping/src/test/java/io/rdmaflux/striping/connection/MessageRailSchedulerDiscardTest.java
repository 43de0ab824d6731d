package io.rdmaflux.striping.connection;

import static io.rdmaflux.striping.TestSubchannels.subchannel;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.striping.StripingMetrics;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A rendezvous message the receiver discarded ({@code onMessageDiscarded}, reactive-core's discarding
 * CTS) leaves the scheduler's bookkeeping like a completed one but counts nothing: no bytes, no
 * message, no out-of-order completions after it.
 */
class MessageRailSchedulerDiscardTest {


    @Test
    void aDiscardedMessageCountsNothingAndDoesNotHoldBackTheCompletionOrder() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        int large = 1 << 20;
        int rts = s.select(0, large, subs);
        int[] rail = new int[100];
        for (int psn = 1; psn < 100; psn++) {
            rail[psn] = s.select(psn, 100, subs);
        }
        s.onMessageDiscarded(subs[rts], 0, large);
        for (int psn = 1; psn < 100; psn++) {
            s.onMessageCompleted(subs[rail[psn]], psn, 100, 10);
        }
        StripingMetrics m = s.metrics();
        assertEquals(0, m.outOfOrderCompletions(), "later messages waited on the discarded one");
        assertEquals(99, m.messagesCompleted());
        assertEquals(99, m.railMessages()[0] + m.railMessages()[1], "the discarded message counted as carried");
        assertEquals(99 * 100, m.railBytes()[0] + m.railBytes()[1], "the discarded message's bytes counted as carried");
    }
}
