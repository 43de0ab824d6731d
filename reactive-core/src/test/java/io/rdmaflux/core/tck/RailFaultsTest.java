package io.rdmaflux.core.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link RailFaults}' corruption rate: checked, and given by {@link SoftRails} to the soft rail's RC and UD fault models. */
class RailFaultsTest {
    @ParameterizedTest
    @ValueSource(doubles = {-0.01, 1.01, Double.NaN, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY})
    void aCorruptionRateOutsideZeroToOneIsRejectedNamingItAndTheRange(double rate) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RailFaults.corruption(rate, 1));
        assertEquals("corruptRate in [0, 1] required but it was " + rate, e.getMessage());
        IllegalArgumentException full = assertThrows(IllegalArgumentException.class,
            () -> new RailFaults(0.01, 0, 0, RailFaults.DEFAULT_REORDER_DELAY_NS, rate, 1));
        assertEquals(e.getMessage(), full.getMessage());
    }

    @ParameterizedTest
    @ValueSource(doubles = {0, 0.01, 1})
    void aCorruptionRateInZeroToOneIsTaken(double rate) {
        RailFaults f = RailFaults.corruption(rate, 7);
        assertEquals(rate, f.corruptRate());
        assertEquals(0, f.lossRate());
        assertEquals(0, new RailFaults(0.05, 0, 0, 7).corruptRate(), "the older constructor corrupts nothing");
    }

    @Test
    void softRailsGiveTheRateToTheRcAndTheUdFaultModelOfEveryPort() {
        try (SoftProvider a = SoftProvider.builder().name("rf-a").portsPerDevice(2).build();
             SoftProvider b = SoftProvider.builder().name("rf-b").portsPerDevice(2).build()) {
            SoftRails.apply(a, b, 2, 0, RailFaults.corruption(0.02, 3));
            for (SoftProvider p : new SoftProvider[] {a, b}) {
                for (int r = 0; r < 2; r++) {
                    RailConfig rail = SoftRails.port(p, r).rail();
                    assertEquals(0.02, rail.rcCorruptRate(), rail::toString);
                    assertEquals(0.02, rail.corruptRate(), rail::toString);
                }
            }
        }
    }
}
