package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soak's checks: every single-byte corruption of a message is caught, so is a wrong sequence
 * number; the trend test fails a rising series and passes a flat noisy one; and the soak's sender
 * and receiver run for a few seconds in this JVM over net loopback (2 rails, one flap per epoch,
 * 2 % RC loss, two epochs so a reconnect is in it) with every message verified and nothing leaked.
 */
class SoakTest {
    private VerbsLeakCheck leaks;

    @BeforeEach
    void snapshot() {
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void nothingLeaked() {
        leaks.assertClean();
    }

    @Test
    void everySingleByteCorruptionAndAWrongSequenceAreDetected() {
        byte[] m = SoakWire.data(7, 42, 300);
        assertNull(SoakWire.check(m, m.length, 7));
        for (int i = 0; i < m.length; i++) {
            byte[] bad = m.clone();
            bad[i] ^= (byte) (1 + (i % 255));
            assertNotNull(SoakWire.check(bad, bad.length, 7), "a change at byte " + i + " went unnoticed");
        }
        String wrongSeq = SoakWire.check(m, m.length, 8);
        assertNotNull(wrongSeq);
        assertTrue(wrongSeq.contains("expected message 8 but got 7"), wrongSeq);
        assertNotNull(SoakWire.check(m, m.length - 1, 7), "a truncated message went unnoticed");
        assertTrue(SoakWire.check(new byte[10], 10, 0).contains("shorter"));
    }

    @Test
    void messageSizesStayInRangeAndBadMaxIsRefused() {
        for (long seq = 0; seq < 10_000; seq++) {
            int n = SoakWire.data(seq, 3, 1000).length;
            assertTrue(n >= 64 && n <= 1000, "message " + seq + " has " + n + " bytes");
        }
        UserError e = assertThrows(UserError.class, () -> SoakWire.data(0, 0, 63));
        assertTrue(e.getMessage().contains("--max-message-bytes must be at least 64 but it was 63"), e.getMessage());
    }

    @Test
    void aRisingSeriesFailsAndAFlatNoisyOnePasses() {
        SplittableRandom r = new SplittableRandom(1);
        int n = 120;
        double[] t = new double[n];
        double[] rising = new double[n];
        double[] flat = new double[n];
        double[] falling = new double[n];
        for (int i = 0; i < n; i++) {
            t[i] = i;
            double noise = r.nextDouble(-20, 20);
            rising[i] = 100 + 0.5 * i + noise; // +30 over the second half: 20 % of a mean near 145
            flat[i] = 100 + noise;             // noise of +-20 % of the mean
            falling[i] = 200 - i + noise;
        }
        TrendTest.Result up = TrendTest.test(t, rising, 0.10, 1);
        assertTrue(up.rising(), up.describe("rising"));
        assertEquals(0.5, up.slopePerSec(), 0.15);
        TrendTest.Result level = TrendTest.test(t, flat, 0.10, 1);
        assertFalse(level.rising(), level.describe("flat"));
        assertFalse(TrendTest.test(t, falling, 0.10, 1).rising());
        // a small integer series: one step of +1 fd stays under the floor of 4, a steady leak does not
        double[] fds = new double[n];
        double[] leaking = new double[n];
        for (int i = 0; i < n; i++) {
            fds[i] = 40 + (i > 100 ? 1 : 0);
            leaking[i] = 40 + i / 10;
        }
        assertFalse(TrendTest.test(t, fds, 0.10, 4).rising());
        assertTrue(TrendTest.test(t, leaking, 0.10, 4).rising());
    }

    @Test
    void theTrendTestRefusesTooFewSamplesAndMismatchedArrays() {
        IllegalArgumentException few = assertThrows(IllegalArgumentException.class,
            () -> TrendTest.test(new double[] {0, 1, 2}, new double[] {1, 2, 3}, 0.1, 1));
        assertTrue(few.getMessage().contains("at least 4 samples but there were 3"), few.getMessage());
        IllegalArgumentException mismatch = assertThrows(IllegalArgumentException.class,
            () -> TrendTest.test(new double[] {0, 1, 2, 3}, new double[] {1, 2, 3}, 0.1, 1));
        assertTrue(mismatch.getMessage().contains("differ in length"), mismatch.getMessage());
    }

    @Test
    void aFewSecondsOfSoakInThisJvmVerifyEveryMessageAcrossFlapsLossAndAReconnect() throws Exception {
        SoakRun.Config c = new SoakRun.Config(List.of("127.0.0.1", "127.0.0.1"), 3_000_000_000L, 1_500_000_000L, 12_000, true, 400, 0.02,
            9, 1000, false, java.nio.file.Path.of("target", "soak-test"), java.time.Duration.ofSeconds(120));
        long deadlineNs = System.nanoTime() + c.timeout().toNanos();
        CompletableFuture<SoakReceiver.Result> received = new CompletableFuture<>();
        SoakSender.Result sent;
        try (SoakEndpoint rx = new SoakEndpoint(c.settings(), "rx", c.rcLoss(), c.seed());
             SoakEndpoint tx = new SoakEndpoint(c.settings(), "tx", c.rcLoss(), c.seed())) {
            RdmaServer server = rx.node().bind(new PortAddress("net", "127.0.0.1", 0));
            Thread t = new Thread(() -> {
                try {
                    received.complete(new SoakReceiver(c.maxMessageBytes()).serve(server, deadlineNs));
                } catch (Throwable e) {
                    received.completeExceptionally(e);
                }
            }, "soak-test-receiver");
            t.start();
            try {
                sent = new SoakSender(tx, server.address(), c.seed(), c.maxMessageBytes(), true, c.maxDownMs()).run(c.runNs(), c.epochNs(), deadlineNs);
            } finally {
                SoakReceiver.Result r = received.get(60, TimeUnit.SECONDS);
                t.join(10_000);
                server.close();
                assertEquals(0, r.wrong(), "first error: " + r.firstError());
            }
            SoakReceiver.Result r = received.get();
            assertEquals(2, sent.epochs());
            assertEquals(2, sent.flaps());
            assertTrue(sent.messages() > 100, "only " + sent.messages() + " messages in 3 s");
            assertEquals(sent.messages(), r.verified());
            assertEquals(sent.bytes(), r.bytes());
            assertEquals(2, r.epochs());
            assertEquals(0, tx.buffersHeld());
            assertEquals(0, rx.buffersHeld());
        }
    }

    @Test
    void badOptionsAreNamed() {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"soak", "--epoch-s", "0"}, new PrintStream(o, true, StandardCharsets.UTF_8),
            new PrintStream(e, true, StandardCharsets.UTF_8));
        assertEquals(1, code);
        assertTrue(e.toString(StandardCharsets.UTF_8).contains("--epoch-s must be in 1..3600 but it was 0.0"), e.toString(StandardCharsets.UTF_8));
        e.reset();
        code = Main.run(new String[] {"soak", "--rc-loss", "0.7"}, new PrintStream(o, true, StandardCharsets.UTF_8),
            new PrintStream(e, true, StandardCharsets.UTF_8));
        assertEquals(1, code);
        assertTrue(e.toString(StandardCharsets.UTF_8).contains("--rc-loss must be in [0, 0.5] but it was 0.7"), e.toString(StandardCharsets.UTF_8));
    }
}
