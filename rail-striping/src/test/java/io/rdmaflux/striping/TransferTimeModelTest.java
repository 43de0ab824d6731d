package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TransferTimeModelTest {

    @Test
    void interpolatesLinearlyBetweenPowersOfTwo() {
        TransferTimeModel m = TransferTimeModel.ofSamples(10, new double[] {100, 300, 700});
        assertEquals(100, m.predictNs(1), 1e-9);
        assertEquals(100, m.predictNs(1024), 1e-9);
        assertEquals(200, m.predictNs(1536), 1e-9);
        assertEquals(300, m.predictNs(2048), 1e-9);
        assertEquals(500, m.predictNs(3072), 1e-9);
        assertEquals(700, m.predictNs(4096), 1e-9);
        // beyond the last sample the last segment is extended
        assertEquals(1100, m.predictNs(6144), 1e-9);
    }

    @Test
    void maxBytesWithinInvertsPredict() {
        TransferTimeModel m = TransferTimeModel.nominal(1_000_000_000L, 2_000);
        for (long size = 1; size < (1L << 34); size = size * 3 + 7) {
            double t = m.predictNs(size);
            long back = m.maxBytesWithin(t);
            assertTrue(Math.abs(back - size) <= Math.max(2, size / 1_000_000), size + " -> " + t + " -> " + back);
        }
        assertEquals(0, m.maxBytesWithin(3_999));
    }

    @Test
    void observeMovesTheBracketingSamplesTowardTheMeasurement() {
        TransferTimeModel m = TransferTimeModel.ofSamples(20, new double[] {1_000_000, 2_000_000, 4_000_000});
        m.observe(1 << 21, 4_000_000, 1.0);
        assertEquals(4_000_000, m.predictNs(1 << 21), 1e-6);
        assertEquals(1_000_000, m.predictNs(1 << 20), 1e-6);
        // the model stays monotone
        assertTrue(m.predictNs(1 << 22) >= m.predictNs(1 << 21));
    }

    @Test
    void rejectsBadSamples() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> TransferTimeModel.ofSamples(0, new double[] {1}));
        assertTrue(e.getMessage().contains("at least 2 samples"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TransferTimeModel.ofSamples(0, new double[] {1, -2}));
        assertTrue(e.getMessage().contains("sample 1 (2^1 bytes) must be > 0 ns but it was -2.0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TransferTimeModel.nominal(0, 1));
        assertTrue(e.getMessage().contains("bandwidthBytesPerSec > 0 required but it was 0"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> TransferTimeModel.ofSamples(62, new double[] {1, 2}));
        assertTrue(e.getMessage().contains("2^62"), e.getMessage());
    }
}
