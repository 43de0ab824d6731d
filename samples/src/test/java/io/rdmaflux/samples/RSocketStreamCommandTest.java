package io.rdmaflux.samples;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code rdmaflux rsocket-stream}: the request-stream service over 2 rails, and its bad input. */
class RSocketStreamCommandTest {
    private String out = "";
    private String err = "";

    private int run(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        out = o.toString(StandardCharsets.UTF_8);
        err = e.toString(StandardCharsets.UTF_8);
        return code;
    }

    @Test
    void streamsEveryPayloadInOrderOverBothRails() {
        assertEquals(0, run("rsocket-stream", "--count", "3000", "--size", "512"), err);
        assertTrue(out.contains("streamed 3,000 payloads of 512 B over 2 rail(s) of the mem fabric"), out);
        assertTrue(out.contains("in order"), out);
        // both rails carried frames: round-robin over the connection's two subchannels
        assertTrue(out.contains("rail 0") && out.contains("rail 1") && !out.contains(": 0 bytes sent"), out);
    }

    @Test
    void badValuesAreNamedWithTheirRange() {
        assertEquals(1, run("rsocket-stream", "--rails", "0"));
        assertTrue(err.contains("--rails must be in 1..16 but it was 0"), err);
        assertEquals(1, run("rsocket-stream", "--size", "4"));
        assertTrue(err.contains("--size must be in 8..1048000 bytes"), err);
        assertEquals(1, run("rsocket-stream", "--fabric", "ib"));
        assertTrue(err.contains("--fabric must be mem or net but it was ib"), err);
        assertEquals(1, run("rsocket-stream", "--count", "0"));
        assertTrue(err.contains("--count must be >= 1 but it was 0"), err);
    }
}
