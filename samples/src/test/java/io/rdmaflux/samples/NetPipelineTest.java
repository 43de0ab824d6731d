package io.rdmaflux.samples;

import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two-process pipeline end to end on the IP fabric over loopback: a receiver ({@code --listen})
 * and a sender ({@code --connect}) in one JVM, each with its own soft provider and two rails on
 * 127.0.0.1, real sockets and real time (generous timeouts, no sleeps).
 */
class NetPipelineTest {
    @TempDir
    Path dir;

    private VerbsLeakCheck leaks;
    private final Sides sides = new Sides();

    @BeforeEach
    void snapshotThreads() {
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void nothingLeaked() throws InterruptedException {
        sides.joinAll();
        leaks.assertClean();
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        }
    }

    private CompletableFuture<Sides.Run> start(Sides.Output out, String... args) {
        return sides.start(out, args);
    }

    private static String awaitListening(Sides.Output out, CompletableFuture<Sides.Run> side) throws Exception {
        return Sides.awaitListening(out, side);
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    @Test
    void senderStreamsAFileToAListeningReceiverOverTwoLoopbackRailsAndBothVerifyIt() throws Exception {
        Path file = dir.resolve("random.bin");
        byte[] bytes = new byte[5 * 1024 * 1024 + 777];
        new Random(7).nextBytes(bytes);
        Files.write(file, bytes);
        Sides.Output receiverOut = new Sides.Output();
        CompletableFuture<Sides.Run> receiver = start(receiverOut, "pipeline", "--listen", "127.0.0.1:0", "--addresses", "127.0.0.1,127.0.0.1",
            "--timeout-s", "60", "--no-progress");
        String at = awaitListening(receiverOut, receiver);
        int port = Integer.parseInt(at.substring(at.lastIndexOf(':') + 1));
        CompletableFuture<Sides.Run> sender = start(new Sides.Output(), "pipeline", "--connect", at, file.toString(), "--addresses", "127.0.0.1,127.0.0.1",
            "--chunk-kib", "128", "--timeout-s", "60", "--no-progress", "--report-dir", dir.resolve("reports").toString());
        Sides.Run s = sender.get(90, TimeUnit.SECONDS);
        Sides.Run r = receiver.get(90, TimeUnit.SECONDS);
        assertEquals(0, r.code(), r.err() + r.out());
        assertEquals(0, s.code(), s.err() + s.out());
        String sha = sha256(file);
        assertTrue(r.out().contains("sha-256 received " + sha + "  OK, verified"), r.out());
        assertTrue(r.out().contains("5.0 MiB of random.bin (1 file(s)) from the sender"), r.out());
        assertTrue(s.out().contains("sha-256 source   " + sha), s.out());
        assertTrue(s.out().contains("OK, verified by the receiver"), s.out());
        assertTrue(s.out().contains("rail 1"), s.out());
        // both ends closed their sockets: the listening port is free again
        try (ServerSocket again = new ServerSocket()) {
            again.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        }
    }

    @Test
    void theConnectingSenderWritesItsStripingWeightsWithWeightsOut() throws Exception {
        Path file = dir.resolve("random.bin");
        byte[] bytes = new byte[4 * 1024 * 1024];
        new Random(11).nextBytes(bytes);
        Files.write(file, bytes);
        Path weights = dir.resolve("weights.txt");
        Sides.Output receiverOut = new Sides.Output();
        CompletableFuture<Sides.Run> receiver = start(receiverOut, "pipeline", "--listen", "127.0.0.1:0", "--addresses", "127.0.0.1,127.0.0.1",
            "--timeout-s", "60", "--no-progress");
        String at = awaitListening(receiverOut, receiver);
        Sides.Run s = start(new Sides.Output(), "pipeline", "--connect", at, file.toString(), "--addresses", "127.0.0.1,127.0.0.1", "--policy",
            "weighted:3,1", "--chunk-kib", "256", "--timeout-s", "60", "--no-progress", "--report-dir", dir.resolve("reports").toString(),
            "--weights-out", weights.toString()).get(90, TimeUnit.SECONDS);
        Sides.Run r = receiver.get(90, TimeUnit.SECONDS);
        assertEquals(0, s.code(), s.err() + s.out());
        assertEquals(0, r.code(), r.err() + r.out());
        assertTrue(s.out().contains("policy weights   0.75 / 0.25"), s.out());
        List<String> lines = Files.readAllLines(weights);
        assertTrue(lines.get(0).startsWith("# striping weights of pipeline --connect " + at + ", policy weighted:3,1"), lines.get(0));
        assertTrue(lines.size() >= 2, lines.toString());
        for (String l : lines.subList(1, lines.size())) {
            assertTrue(l.matches("\\d+\\.\\d{6} 0\\.7500 0\\.2500"), l);
        }
    }

    @Test
    void recordModeCountsWordsAtTheReceiver() throws Exception {
        Path file = Files.writeString(dir.resolve("t.txt"), "red green\nblue red\n".repeat(3000));
        Sides.Output receiverOut = new Sides.Output();
        CompletableFuture<Sides.Run> receiver = start(receiverOut, "pipeline", "--listen", "127.0.0.1:0", "--timeout-s", "60", "--no-progress");
        String at = awaitListening(receiverOut, receiver);
        Sides.Run s = start(new Sides.Output(), "pipeline", "--connect", at, file.toString(), "--records", "--chunk-kib", "4", "--timeout-s", "60",
            "--no-progress", "--report-dir", dir.resolve("reports").toString()).get(90, TimeUnit.SECONDS);
        Sides.Run r = receiver.get(90, TimeUnit.SECONDS);
        assertEquals(0, s.code(), s.err() + s.out());
        assertEquals(0, r.code(), r.err() + r.out());
        assertTrue(r.out().contains("6000 lines, 12000 words, 3 distinct"), r.out());
        assertTrue(r.out().contains("red=6000"), r.out());
    }

    @Test
    void unreachablePeerIsOneLineAndExitCode1() throws Exception {
        Path file = Files.writeString(dir.resolve("f.txt"), "x\n");
        String at = "127.0.0.1:" + freeLoopbackPort();
        Sides.Run s = start(new Sides.Output(), "pipeline", "--connect", at, file.toString(), "--timeout-s", "20", "--no-progress").get(50, TimeUnit.SECONDS);
        assertEquals(1, s.code(), s.out());
        String[] lines = s.err().strip().split("\n");
        assertEquals(1, lines.length, s.err());
        assertTrue(s.err().contains("cannot connect to " + at), s.err());
        assertFalse(s.err().contains("\tat "), s.err());
    }

    @Test
    void benchRunsOsuTablesOverTheNetFabricOnLoopback() {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"bench", "bw", "--fabric", "net", "--addresses", "127.0.0.1,127.0.0.1", "--sizes", "4k,256k",
            "--iterations", "3"}, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        String out = o.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, e.toString(StandardCharsets.UTF_8) + out);
        assertTrue(out.contains("fabric net, 2 rail(s)"), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("262144 ")), out);
        code = Main.run(new String[] {"bench", "latency", "--fabric", "mem", "--addresses", "127.0.0.1"}, new PrintStream(o, true, StandardCharsets.UTF_8),
            new PrintStream(e, true, StandardCharsets.UTF_8));
        assertEquals(1, code);
        assertTrue(e.toString(StandardCharsets.UTF_8).contains("--addresses applies to --fabric net and --listen/--connect only"), e.toString(StandardCharsets.UTF_8));
    }

    @Test
    void badNetFlagsAreOneLineWithTheValue() throws IOException {
        Path f = Files.writeString(dir.resolve("f.txt"), "x\n");
        List<String[]> cases = new ArrayList<>();
        cases.add(new String[] {"--listen", "127.0.0.1:1", "--connect", "127.0.0.1:2", "--listen and --connect exclude each other"});
        cases.add(new String[] {"--listen", "127.0.0.1:1", f.toString(), "the receiver (--listen) takes no INPUT"});
        cases.add(new String[] {"--addresses", "127.0.0.1", f.toString(), "--addresses applies to --listen/--connect only"});
        cases.add(new String[] {"--connect", "nohostport", f.toString(), "--connect nohostport is not host:port"});
        cases.add(new String[] {"--connect", "127.0.0.1:99999", f.toString(), "port must be in 0..65535 but it was 99999"});
        cases.add(new String[] {"--connect", "127.0.0.1:1", "--addresses", "127.0.0.1,,127.0.0.1", f.toString(), "has an empty entry"});
        cases.add(new String[] {"--in-flight", "0", f.toString(), "--in-flight must be in 1..64 but it was 0"});
        cases.add(new String[] {"--listen", "127.0.0.1:1", "--weights-out", dir.resolve("w.txt").toString(),
            "--weights-out applies to the sender: the receiver (--listen) schedules no striped data"});
        for (String[] c : cases) {
            List<String> args = new ArrayList<>(List.of("pipeline", "--no-progress"));
            args.addAll(List.of(c).subList(0, c.length - 1));
            ByteArrayOutputStream o = new ByteArrayOutputStream();
            ByteArrayOutputStream e = new ByteArrayOutputStream();
            int code = Main.run(args.toArray(new String[0]), new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
            String err = e.toString(StandardCharsets.UTF_8);
            assertEquals(1, code, String.join(" ", args) + ": " + err + o);
            assertEquals(1, err.strip().split("\n").length, err);
            assertTrue(err.contains(c[c.length - 1]), "'" + c[c.length - 1] + "' missing in: " + err);
        }
    }
}
