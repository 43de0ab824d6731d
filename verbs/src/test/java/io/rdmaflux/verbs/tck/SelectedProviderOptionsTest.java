package io.rdmaflux.verbs.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.ProviderUnavailableException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The parsing and failure paths of {@link SelectedProviderTck}'s selection. */
class SelectedProviderOptionsTest {
    @Test
    void optionsAreKeyValuePairsSeparatedByCommas() {
        assertEquals(Map.of("tls", "tcp", "devices", "2"), SelectedProviderTck.parseOptions("tls=tcp, devices=2"));
        assertEquals(Map.of("tls", "sm,self", "threading", "invoker"), SelectedProviderTck.parseOptions("tls=sm,self,threading=invoker"));
        assertEquals(Map.of(), SelectedProviderTck.parseOptions(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SelectedProviderTck.parseOptions("tls"));
        assertTrue(e.getMessage().contains("'tls'") && e.getMessage().contains("key=value"), e.getMessage());
    }

    @Test
    void anUnknownProviderFailsNamingTheKnownOnes() {
        ProviderUnavailableException e = assertThrows(ProviderUnavailableException.class,
            () -> new NamedProviderFixture("nosuch", Map.of()));
        assertTrue(e.getMessage().contains("nosuch") && e.getMessage().contains("soft"), e.getMessage());
    }

    @Test
    void theSoftProviderRunsUnderTheNamedFixture() {
        try (NamedProviderFixture fx = new NamedProviderFixture("soft", Map.of("threading", "invoker"))) {
            assertEquals("mem", fx.deviceA().port(1).address().fabric());
            assertTrue(fx.deviceA() != fx.deviceB(), "two providers, two devices");
        }
    }
}
