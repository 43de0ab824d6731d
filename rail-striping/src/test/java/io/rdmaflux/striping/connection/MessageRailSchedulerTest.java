package io.rdmaflux.striping.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.striping.StripingPolicies;
import java.lang.reflect.Proxy;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The connection-side striping hooks ({@code stripe}, {@code onStripeCompleted}) driven directly:
 * rail 0 at 1 GB/s, rail 1 at 250 MB/s.
 */
class MessageRailSchedulerTest {

    /** A subchannel view that can always send; any method the SPI adds answers a neutral value. */
    private static Subchannel subchannel(int rail) {
        return (Subchannel) Proxy.newProxyInstance(Subchannel.class.getClassLoader(), new Class<?>[] {Subchannel.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "rail" -> rail;
                case "canSend", "isUsable" -> true;
                case "sendCredits" -> 16L;
                case "freeSendBuffers", "maxFramePayloadBytes" -> 16;
                case "toString" -> "subchannel " + rail;
                case "hashCode" -> rail;
                case "equals" -> proxy == args[0];
                default -> method.getReturnType() == long.class ? 0L : method.getReturnType() == int.class ? 0 : null;
            });
    }

    @Test
    void adaptiveStripesOfConnectionMessagesConvergeTo4To1() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(StripingPolicies.adaptive())
            .stripeGranuleBytes(1)).create(List.of(subs));
        int length = 1 << 20;
        long now = 0;
        for (int psn = 0; psn < 10; psn++) {
            long[] out = new long[2];
            s.stripe(psn, length, subs, now, out);
            assertEquals(length, out[0] + out[1]);
            // stripes posted together, each finishing after its bytes at its rail's rate
            long t0 = now + out[0];
            long t1 = now + out[1] * 4;
            s.onStripeCompleted(subs[0], psn, 0, out[0], now, t0);
            s.onStripeCompleted(subs[1], psn, out[0], out[1], now, t1);
            now = Math.max(t0, t1);
        }
        assertEquals(0.8, s.share(0), 0.01);
        // once the connection stripes, large messages' RTSs are placed by the multiplexing policy
        assertTrue(s.select(10, length, subs) >= 0);
        assertEquals(1 << 20, s.stripeThresholdBytes() * 16);
    }

    @Test
    void messageElapsedTimeWithTheRendezvousWaitDoesNotPullStripedWeightsTowardsEven() {
        Subchannel[] subs = {subchannel(0), subchannel(1)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.of(spec -> spec.striping(StripingPolicies.adaptive())
            .stripeGranuleBytes(1)).create(List.of(subs));
        int length = 1 << 20;
        long rendezvousWaitNs = 2_000_000; // RTS -> CTS round trip, the same whichever rail is faster
        long now = 0;
        for (int psn = 0; psn < 20; psn++) {
            // the connection's order: select places the RTS, stripe splits the data, the stripes
            // complete, then the message completes once on the RTS's rail
            int rtsRail = s.select(psn, length, subs);
            long dataStart = now + rendezvousWaitNs;
            long[] out = new long[2];
            s.stripe(psn, length, subs, dataStart, out);
            long t0 = dataStart + out[0];
            long t1 = dataStart + out[1] * 4;
            s.onStripeCompleted(subs[0], psn, 0, out[0], dataStart, t0);
            s.onStripeCompleted(subs[1], psn, out[0], out[1], dataStart, t1);
            long done = Math.max(t0, t1);
            s.onMessageCompleted(subs[rtsRail], psn, length, done - now);
            now = done;
        }
        assertEquals(0.8, s.share(0), 0.01);
    }

    @Test
    void aFailedSubchannelGetsNoStripe() {
        Subchannel[] subs = {subchannel(0), subchannel(1), subchannel(2)};
        MessageRailScheduler s = (MessageRailScheduler) RailsChannelFactory.even().create(List.of(subs));
        s.onSubchannelFailed(subs[1]);
        long[] out = new long[3];
        s.stripe(0, 3 << 20, subs, 0, out);
        assertEquals(0, out[1]);
        assertEquals(3 << 20, out[0] + out[2]);
        for (int i = 0; i < 20; i++) {
            int rail = s.select(i, 100, subs);
            assertTrue(rail == 0 || rail == 2, "rail " + rail);
        }
    }
}
