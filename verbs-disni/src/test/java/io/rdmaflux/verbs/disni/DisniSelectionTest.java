package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.ProviderUnavailableException;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** Asking for {@code disni} where it cannot run, by name and through {@code auto}. */
class DisniSelectionTest {
    @Test
    void openingDisniByNameFailsWithOneMessageSayingWhatIsMissingAndHowToFixIt() {
        ProviderUnavailableException e = assertThrows(ProviderUnavailableException.class, () -> RdmaProviders.open("disni"));
        String m = e.getMessage();
        assertTrue(m.startsWith("RDMA provider 'disni' cannot run here: "), m);
        assertTrue(m.contains("libdisni") || m.contains("no RDMA device") || m.contains("binding"), m);
        assertEquals(1, m.lines().count(), m);
        assertEquals(m, assertThrows(ProviderUnavailableException.class, () -> RdmaProviders.open("disni")).getMessage(),
            "the probe is cached: the same message every time");
    }

    @Test
    void autoFallsBackToSoftWithOneLogLineNamingDisni() {
        Logger log = Logger.getLogger(RdmaProviders.class.getName());
        List<LogRecord> records = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                records.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        try (RdmaProvider p = RdmaProviders.open(RdmaProviders.AUTO, Map.of())) {
            assertEquals("soft", p.name());
        } finally {
            log.removeHandler(capture);
        }
        assertEquals(1, records.size(), () -> "one log line, got " + records.stream().map(LogRecord::getMessage).toList());
        String line = records.get(0).getMessage();
        assertTrue(line.contains("chose 'soft'") && line.contains("'disni' unavailable"), line);
    }

    @Test
    void disniIsPreferredOverEveryOtherProviderWhereItCanRun() {
        assertEquals("disni", RdmaProviders.factories().get(0).name());
    }
}
