package io.rdmaflux.core;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectRetryTest {
    @Test
    void backoffDoublesUpToTheCapAndJitterStaysInItsBand() {
        ConnectRetry r = ConnectRetry.backoff(10, 1_000).maxBackoffNs(5_000).jitter(0);
        assertEquals(1_000, r.backoffNs(1, 0.3));
        assertEquals(2_000, r.backoffNs(2, 0.3));
        assertEquals(4_000, r.backoffNs(3, 0.3));
        assertEquals(5_000, r.backoffNs(4, 0.3));
        assertEquals(5_000, r.backoffNs(60, 0.3));
        ConnectRetry j = r.jitter(0.5);
        assertEquals(500, j.backoffNs(1, 0.0));
        assertEquals(1_500, j.backoffNs(1, 1.0));
        assertEquals(1_000, j.backoffNs(1, 0.5));
        ConnectRetry huge = ConnectRetry.backoff(1_000_000, Long.MAX_VALUE / 4).maxBackoffNs(Long.MAX_VALUE).jitter(0);
        assertTrue(huge.backoffNs(1_000_000, 0.5) > 0, "no overflow");
    }

    @Test
    void badArgumentsNameTheValue() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectRetry.backoff(0, 1)).getMessage().contains("0"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectRetry.backoff(3, 0)).getMessage().contains("firstBackoffNs"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectRetry.backoff(3, 10).maxBackoffNs(5)).getMessage().contains("5"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectRetry.backoff(3, 10).jitter(1.5)).getMessage().contains("1.5"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectRetry.backoff(3, 10).jitter(Double.NaN)).getMessage().contains("NaN"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ConnectRetry.backoff(3, 10).totalTimeoutNs(0)).getMessage().contains("0"));
        assertEquals(1, ConnectionSpec.defaults().connectRetry().maxAttempts(), "no retry unless asked");
        assertTrue(ConnectionSpec.defaults().connectRetry(ConnectRetry.backoff(3, 10)).toString().contains("maxAttempts=3"));
        assertEquals(3, ConnectionSpec.rails(2).connectRetry(ConnectRetry.backoff(3, 10)).withRails(1).connectRetry().maxAttempts(),
            "the retry survives the other withers");
    }
}
