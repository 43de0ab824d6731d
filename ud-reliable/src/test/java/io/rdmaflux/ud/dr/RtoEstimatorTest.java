package io.rdmaflux.ud.dr;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** RFC 6298 arithmetic, backoff, clamping and the timer edge cases. */
class RtoEstimatorTest {
    @Test
    void firstSampleSetsSrttAndHalfVariance() {
        RtoEstimator e = new RtoEstimator(1_000_000, 1_000, 10_000_000);
        e.sample(100_000);
        assertEquals(100_000, e.srttNs());
        assertEquals(50_000, e.rttvarNs());
        assertEquals(300_000, e.rtoNs()); // 100 000 + 4 * 50 000
        e.sample(200_000);
        assertEquals(62_500, e.rttvarNs()); // (3 * 50 000 + 100 000) / 4
        assertEquals(112_500, e.srttNs()); // (7 * 100 000 + 200 000) / 8
        assertEquals(362_500, e.rtoNs());
    }

    @Test
    void backoffDoublesUpToTheMaxAndASampleResetsIt() {
        RtoEstimator e = new RtoEstimator(1_000_000, 1_000, 3_000_000);
        e.backoff();
        assertEquals(2_000_000, e.rtoNs());
        e.backoff();
        assertEquals(3_000_000, e.rtoNs());
        assertEquals(2, e.backoffs());
        e.sample(10_000);
        assertEquals(0, e.backoffs());
        assertEquals(30_000, e.rtoNs());
    }

    @Test
    void zeroRttIsClampedToTheMinimumAndNegativeIgnored() {
        RtoEstimator e = new RtoEstimator(1_000_000, 200_000, 3_000_000);
        e.sample(-5);
        assertEquals(1_000_000, e.rtoNs());
        e.sample(0);
        assertEquals(200_000, e.rtoNs());
        e.reset();
        assertEquals(1_000_000, e.rtoNs());
        assertEquals(-1, e.srttNs());
    }

    @Test
    void badBoundsAreRefusedNamingThem() {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> new RtoEstimator(1, 5, 4));
        assertEquals("0 < minRtoNs <= maxRtoNs required but they were 5 and 4", x.getMessage());
        IllegalArgumentException y = assertThrows(IllegalArgumentException.class, () -> DrConfig.builder().windowVfrags(0));
        assertEquals("windowVfrags in [1, 4096] required but it was 0", y.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DrConfig.builder().minRtoNs(10).maxRtoNs(5).build());
        assertThrows(IllegalArgumentException.class, () -> DrConfig.builder().datagramBytes(DrDatagram.HEADER_BYTES));
    }
}
