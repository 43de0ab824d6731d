package io.rdmaflux.striping;

import io.rdmaflux.core.stripe.MessageTimings;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StripingPoliciesTest {

    @Test
    void evenStripingSplitsInWholeGranulesWithTheTailOnOneRail() {
        StripingPolicy even = StripingPolicies.even().create(3, 4096);
        long[] out = new long[3];
        even.split(10 * 4096 + 100, 0b111, 0, out);
        assertArrayEquals(new long[] {4 * 4096 + 100, 3 * 4096, 3 * 4096}, out);
        even.split(1 << 20, 0b101, 0, out);
        assertArrayEquals(new long[] {1 << 19, 0, 1 << 19}, out);
        assertEquals(0.5, even.share(0));
        assertEquals(0.0, even.share(1));
    }

    @Test
    void weightedStripingFollowsStaticWeights() {
        StripingPolicy w = StripingPolicies.weighted(4, 1).create(2, 4096);
        long[] out = new long[2];
        w.split(1 << 20, 0b11, 0, out);
        assertArrayEquals(new long[] {(1 << 20) * 4 / 5 / 4096 * 4096 + 4096, (1 << 20) / 5 / 4096 * 4096}, out);
        assertEquals(1 << 20, out[0] + out[1]);
        w.split(1 << 20, 0b10, 0, out);
        assertArrayEquals(new long[] {0, 1 << 20}, out);
    }

    @Test
    void splitsAlwaysAddUpToTheMessageOnRandomInput() {
        SplittableRandom random = new SplittableRandom(42);
        StripingPolicy[] policies = {
            StripingPolicies.even().create(4, 4096),
            StripingPolicies.weighted(5, 3, 0, 1).create(4, 4096),
            StripingPolicies.adaptive().create(4, 4096),
            StripingPolicies.loadBalanced().create(4, 4096),
            StripingPolicies.sampled(TransferTimeModel.nominal(1_000_000_000L, 1000), TransferTimeModel.nominal(250_000_000L, 5000),
                TransferTimeModel.nominal(500_000_000L, 100), TransferTimeModel.nominal(2_000_000_000L, 20_000)).create(4, 4096),
        };
        long[] out = new long[4];
        for (int i = 0; i < 2000; i++) {
            long length = 1 + random.nextLong(64L << 20);
            long usable = 1 + random.nextLong(15);
            for (StripingPolicy p : policies) {
                p.split(length, usable, i * 1000L, out);
                long sum = 0;
                for (int r = 0; r < 4; r++) {
                    assertTrue(out[r] >= 0);
                    if (!RailMask.contains(usable, r)) {
                        assertEquals(0, out[r], p.name() + " used unusable rail " + r);
                    }
                    sum += out[r];
                }
                assertEquals(length, sum, p.name() + " lost bytes");
            }
        }
    }

    @Test
    void loadBalancedFragmentationEqualizesOutstandingBytes() {
        StripingPolicy lb = StripingPolicies.loadBalanced().create(3, 1024);
        long[] out = new long[3];
        lb.split(3 * 1024 * 1024, 0b111, 0, out);
        org.junit.jupiter.api.Assertions.assertArrayEquals(new long[] {1 << 20, 1 << 20, 1 << 20}, out);
        // rail 0 still has 1 MiB outstanding: the next 1.5 MiB fills the others up to its level first
        lb.onStripePosted(0, 1 << 20, 0);
        lb.split(3 * 512 * 1024, 0b111, 0, out);
        assertEquals(0, out[0]);
        assertEquals(out[1], out[2]);
        assertEquals(3 * 512 * 1024, out[1] + out[2]);
        lb.onStripeCompleted(0, 1 << 20, 0, 1, true, 0);
        lb.split(3 * 1024, 0b111, 0, out);
        org.junit.jupiter.api.Assertions.assertArrayEquals(new long[] {1024, 1024, 1024}, out);
    }

    /** Timings of one message as a fixed test double. */
    private record Timings(long lengthBytes, long[] bytes, long[] timesNs, boolean resent, boolean censored) implements MessageTimings {
        Timings(long lengthBytes, long[] bytes, long[] timesNs, boolean resent) {
            this(lengthBytes, bytes, timesNs, resent, false);
        }

        @Override
        public long stripeBytes(int rail) {
            return bytes[rail];
        }

        @Override
        public long deliveryTimeNs(int rail) {
            return timesNs[rail];
        }

        @Override
        public long railsUsed() {
            long m = 0;
            for (int i = 0; i < bytes.length; i++) {
                if (bytes[i] > 0) {
                    m |= 1L << i;
                }
            }
            return m;
        }

        @Override
        public long completedNs() {
            return 0;
        }
    }

    @Test
    void adaptiveAppliesEquationFourOfSeed000() {
        StripingPolicy a = StripingPolicies.adaptive(0.5, 0.0, 1, 1).create(2, 1);
        // equal weights, 512 KiB each: t = S/BW for 1 GB/s and 250 MB/s
        long s = 512 * 1024;
        a.onMessageCompleted(new Timings(2 * s, new long[] {s, s}, new long[] {s, 4 * s}, false));
        // eq. 3 target 0.8/0.2, eq. 4 with alpha 0.5: 0.65/0.35
        assertEquals(0.65, a.share(0), 1e-12);
        assertEquals(0.35, a.share(1), 1e-12);
        assertEquals(1.0, a.share(0) + a.share(1), 1e-12);
    }

    /**
     * Seed 000 eq. 4 exactly as printed (no rate window), α = 0.5, from equal weights, over three
     * messages of 1 MB split by the current weights (the first 2 × 512 KiB). Rates in bytes/ns:
     * message 1 rail 0 at 1, rail 1 at 0.25; message 2 both at 1 (rail 1 got faster); message 3
     * rail 0 at 0.5, rail 1 at 1. Each update: W'_i = (1 - α) W_i + α (W_i/t_i) / Σ_k (W_k/t_k).
     */
    @Test
    void perMessageAdaptiveAppliesEquationFourExactlyOverSeveralUpdates() {
        StripingPolicy exact = StripingPolicies.adaptive(0.5, Duration.ZERO, 0.0, 1, 1).create(2, 1);
        StripingPolicy windowed = StripingPolicies.adaptive(0.5, StripingPolicies.DEFAULT_RATE_WINDOW, 0.0, 1, 1).create(2, 1);
        long s = 512 * 1024;
        // 1: W/t = 0.5/s and 0.5/4s: shares 0.8/0.2 by eq. 3; eq. 4: 0.25 + 0.4 = 0.65, 0.25 + 0.1 = 0.35
        Timings first = new Timings(2 * s, new long[] {s, s}, new long[] {s, 4 * s}, false);
        exact.onMessageCompleted(first);
        windowed.onMessageCompleted(first);
        assertEquals(0.65, exact.share(0), 1e-12);
        assertEquals(0.35, exact.share(1), 1e-12);
        // 2: 650 000 + 350 000 bytes, both rails at 1 byte/ns: eq. 3 gives 0.5/0.5;
        // eq. 4: 0.325 + 0.25 = 0.575, 0.175 + 0.25 = 0.425
        Timings second = new Timings(1_000_000, new long[] {650_000, 350_000}, new long[] {650_000, 350_000}, false);
        exact.onMessageCompleted(second);
        windowed.onMessageCompleted(second);
        assertEquals(0.575, exact.share(0), 1e-12);
        assertEquals(0.425, exact.share(1), 1e-12);
        // the default rate window still remembers rail 1 at 0.25 byte/ns: it cannot pass this test by accident
        assertTrue(windowed.share(0) > 0.6, "windowed share " + windowed.share(0));
        // 3: 575 000 bytes at 0.5 byte/ns (1 150 000 ns), 425 000 at 1 byte/ns: eq. 3 gives 1/3 and 2/3;
        // eq. 4: 0.2875 + 1/6, 0.2125 + 1/3
        exact.onMessageCompleted(new Timings(1_000_000, new long[] {575_000, 425_000}, new long[] {1_150_000, 425_000}, false));
        assertEquals(0.2875 + 1.0 / 6, exact.share(0), 1e-12);
        assertEquals(0.2125 + 1.0 / 3, exact.share(1), 1e-12);
        assertEquals(1.0, exact.share(0) + exact.share(1), 1e-12);
    }

    @Test
    void staticPoliciesReadZeroForARemovedRailAndRenormalizeTheRest() {
        StripingPolicy even = StripingPolicies.even().create(3, 1);
        StripingPolicy weighted = StripingPolicies.weighted(2, 1, 1).create(3, 1);
        even.onRailRemoved(1);
        weighted.onRailRemoved(0);
        assertEquals(0.5, even.share(0), 1e-12);
        assertEquals(0.0, even.share(1), 1e-12);
        assertEquals(0.0, weighted.share(0), 1e-12);
        assertEquals(0.5, weighted.share(1), 1e-12);
        assertEquals(0.5, weighted.share(2), 1e-12);
    }

    /**
     * 400 + 100 MB/s rails at weights 0.6/0.4 (stripes of 1.5 ms and 4 ms); the progress thread is
     * held up for 12 ms, then finds rail 0's 8 stripes and rail 1's 3 at once: the first of each
     * carries the 12 ms, the others no time (censored). Rail 1's later stripes are timed normally.
     */
    @Test
    void aBurstOfCompletionsFoundAfterADelayedPollTeachesTheWindowedPolicyTheRates() {
        StripingPolicy windowed = StripingPolicies.adaptive(0.5, Duration.ofMillis(20), 0.0, 0.6, 0.4).create(2, 1);
        StripingPolicy perMessage = StripingPolicies.adaptive(0.5, Duration.ZERO, 0.0, 0.6, 0.4).create(2, 1);
        for (int m = 0; m < 8; m++) {
            long t0 = m == 0 ? 12_000_000 : 0;
            long t1 = m == 0 ? 12_000_000 : m < 3 ? 0 : 4_000_000;
            Timings t = new Timings(1_000_000, new long[] {600_000, 400_000}, new long[] {t0, t1}, false, t0 == 0 || t1 == 0);
            windowed.onMessageCompleted(t);
            perMessage.onMessageCompleted(t);
        }
        // message by message the burst says nothing (equal times, then censored); over the rails' busy
        // time it shows rail 0 carried 4.8 MB in 12 ms while rail 1 took 4 ms per 0.4 MB
        assertEquals(0.6, perMessage.share(0), 1e-12);
        assertTrue(windowed.share(0) > 0.75, "windowed share " + windowed.share(0));
        assertEquals(1.0, windowed.share(0) + windowed.share(1), 1e-12);
    }

    @Test
    void adaptiveLeavesWeightsAloneWhenAllCompletionsAreSeenTogether() {
        // seed 000 §4.5 case 3: a delayed progress engine finds every completion at once
        StripingPolicy a = StripingPolicies.adaptive(0.7, 0.0, 3, 1).create(2, 1);
        a.onMessageCompleted(new Timings(4000, new long[] {3000, 1000}, new long[] {5000, 5000}, false));
        assertEquals(0.75, a.share(0), 1e-12);
        assertEquals(0.25, a.share(1), 1e-12);
    }

    @Test
    void adaptiveIgnoresResentMessagesAndKeepsTotalWhenARailIsRemoved() {
        StripingPolicy a = StripingPolicies.adaptive(0.5, 0.0, 1, 1, 2).create(3, 1);
        a.onMessageCompleted(new Timings(4000, new long[] {1000, 1000, 2000}, new long[] {1, 100, 100}, true));
        assertEquals(0.25, a.share(0), 1e-12);
        a.onRailRemoved(2);
        assertEquals(0.5, a.share(0), 1e-12);
        assertEquals(0.5, a.share(1), 1e-12);
        assertEquals(0.0, a.share(2), 1e-12);
    }

    @Test
    void adaptiveKeepsAFloorSoASlowedRailIsStillProbed() {
        StripingPolicy a = StripingPolicies.adaptive(1.0, 0.05, 1, 1).create(2, 1);
        a.onMessageCompleted(new Timings(2000, new long[] {1000, 1000}, new long[] {1, 1_000_000}, false));
        assertEquals(0.05, a.share(1), 1e-12);
        assertEquals(0.95, a.share(0), 1e-12);
    }

    @Test
    void adaptiveRejectsBadParameters() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.adaptive(0));
        assertTrue(e.getMessage().contains("alpha in (0, 1] required but it was 0.0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.adaptive(1.5));
        assertTrue(e.getMessage().contains("1.5"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.adaptive(0.5, 0.5, 1, 1).create(2, 1));
        assertTrue(e.getMessage().contains("minShare"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.adaptive(0.5, 0, 1).create(2, 1));
        assertTrue(e.getMessage().contains("2 rails but 1 weights"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.adaptive(0.5, Duration.ofNanos(-1), 0, 1, 1));
        assertTrue(e.getMessage().contains("rateWindow >= 0 required but it was PT-0.000000001S"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.even().create(2, 0));
        assertTrue(e.getMessage().contains("stripeGranuleBytes >= 1 required but it was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.weighted(1, Double.NaN).create(2, 1));
        assertTrue(e.getMessage().contains("finite weights"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> StripingPolicies.sampled(TransferTimeModel.nominal(1, 0)).create(2, 1));
        assertTrue(e.getMessage().contains("2 rails but 1 models"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
            () -> StripingPolicies.sampled(2.0, TransferTimeModel.nominal(1, 0)).create(1, 1));
        assertTrue(e.getMessage().contains("gain in [0, 1] required but it was 2.0"), e.getMessage());
    }
}
