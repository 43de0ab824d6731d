package io.rdmaflux.core.channel;

import io.rdmaflux.verbs.Port;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** The SPI's default methods: a policy that implements only {@code select} keeps working. */
class SubchannelSchedulerSpiTest {
    private record Fake(int rail, boolean isUsable) implements Subchannel {
        @Override
        public Port port() {
            throw new UnsupportedOperationException();
        }

        @Override
        public long sendCredits() {
            return 1;
        }

        @Override
        public int freeSendBuffers() {
            return 1;
        }

        @Override
        public int maxFramePayloadBytes() {
            return 1024;
        }

        @Override
        public int framesInFlight() {
            return 0;
        }

        @Override
        public long bytesSent() {
            return 0;
        }

        @Override
        public long messagesCompleted() {
            return 0;
        }
    }

    private final SubchannelScheduler selectOnly = (psn, lengthBytes, s) -> 0;

    @Test
    void aSelectOnlySchedulerNeverStripes() {
        assertEquals(Long.MAX_VALUE, selectOnly.stripeThresholdBytes());
    }

    @Test
    void defaultStripeSplitsEvenlyOverUsableSubchannelsOnly() {
        Subchannel[] s = {new Fake(0, true), new Fake(1, false), new Fake(2, true)};
        long[] bytes = new long[3];
        selectOnly.stripe(7, 1001, s, 0, bytes);
        assertArrayEquals(new long[] {501, 0, 500}, bytes);
    }

    @Test
    void defaultStripeLeavesEverythingZeroWhenNoSubchannelIsUsable() {
        Subchannel[] s = {new Fake(0, false), new Fake(1, false)};
        long[] bytes = new long[2];
        selectOnly.stripe(7, 64, s, 0, bytes);
        assertArrayEquals(new long[] {0, 0}, bytes);
    }
}
