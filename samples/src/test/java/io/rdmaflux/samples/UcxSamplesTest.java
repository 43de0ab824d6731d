package io.rdmaflux.samples;

import io.rdmaflux.verbs.RdmaProviderFactory;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code bench} and {@code pipeline} on the {@code ucx} provider (module verbs-ucx): both hosts in this
 * JVM over UCX shared memory and over UCX's tcp transport, and the two-process mode ({@code --listen} /
 * {@code --connect}) through the ucx provider's TCP connection manager, its two sides on two threads
 * ({@link Sides}) with a provider each, which share no UCX directory or context, so each resolves the
 * other only from the connection manager's exchange, as two processes do. The runs are skipped, with the reason,
 * where the system's UCX library is missing; the refusals of options UCX cannot honour run everywhere.
 */
class UcxSamplesTest {
    @TempDir
    Path dir;

    private final Sides sides = new Sides();

    @AfterEach
    void nothingLeaked() throws InterruptedException {
        sides.joinAll();
        VerbsLeakCheck.assertNoSoftLeaks();
    }

    private static void assumeUcx() {
        Optional<String> reason = RdmaProviders.factories().stream().filter(f -> f.name().equals("ucx")).findFirst()
            .map(RdmaProviderFactory::unavailableReason).orElse(Optional.of("verbs-ucx is not on the class path"));
        assumeTrue(reason.isEmpty(), () -> "UCX unavailable: " + reason.orElse(""));
    }

    @Test
    void benchLatencyAndBandwidthRunOnUcxSharedMemoryAndTcp() {
        assumeUcx();
        Sides.Run sm = Sides.run("bench", "latency", "--provider", "ucx", "--sizes", "8,4k", "-i", "200", "-x", "20", "--jit-warmup", "0");
        assertEquals(0, sm.code(), sm.err() + sm.out());
        assertTrue(sm.out().contains("# rdmaflux latency: provider ucx, fabric sm, 1 rail(s)"), sm.out());
        assertTrue(sm.out().lines().anyMatch(l -> l.matches("4096 +[0-9.]+ +[0-9.]+ +[0-9.]+")), sm.out());
        Sides.Run tcp = Sides.run("bench", "bw", "--provider", "ucx", "--fabric", "tcp", "--rails", "2", "--sizes", "64k",
            "-i", "5", "-x", "1", "-W", "8", "--jit-warmup", "0");
        assertEquals(0, tcp.code(), tcp.err() + tcp.out());
        assertTrue(tcp.out().contains("# rdmaflux bw: provider ucx, fabric tcp, 2 rail(s)"), tcp.out());
        assertTrue(tcp.out().lines().anyMatch(l -> l.matches("65536 +[0-9.]+")), tcp.out());
        Sides.Run put = Sides.run("bench", "put-bw", "--provider", "ucx", "--rails", "2", "--sizes", "4k,256k", "-i", "3", "-x", "1", "-W", "4");
        assertEquals(0, put.code(), put.err() + put.out());
        assertTrue(put.out().contains("# rdmaflux put-bw: provider ucx, fabric sm, 2 rail(s)"), put.out());
        assertTrue(put.out().lines().anyMatch(l -> l.matches("262144 +[0-9.]+")), put.out());
    }

    @Test
    void pipelineStreamsAndVerifiesAFileOverTwoUcxRails() throws Exception {
        assumeUcx();
        Path file = dir.resolve("random.bin");
        byte[] bytes = new byte[2 * 1024 * 1024 + 777];
        new Random(17).nextBytes(bytes);
        Files.write(file, bytes);
        Sides.Run r = Sides.run("pipeline", "--no-progress", "--report-dir", dir.resolve("reports").toString(), file.toString(),
            "--provider", "ucx", "--rails", "2", "--chunk-kib", "64");
        assertEquals(0, r.code(), r.err() + r.out());
        assertTrue(r.out().contains("OK, verified"), r.out());
        assertTrue(r.out().contains("2 rails, ucx provider, UCX sm,self in one JVM"), r.out());
    }

    @Test
    void benchRunsBetweenTwoSidesThroughTheUcxTcpConnectionManager() throws Exception {
        assumeUcx();
        Sides.Output lo = new Sides.Output();
        CompletableFuture<Sides.Run> listener = sides.start(lo, "bench", "latency", "--provider", "ucx", "--listen", "127.0.0.1:0", "--rails", "2",
            "--timeout-s", "60");
        String at = Sides.awaitListening(lo, listener);
        Sides.Run c = sides.start(new Sides.Output(), "bench", "latency", "--provider", "ucx", "--connect", at, "--rails", "2", "--sizes", "8,64k",
            "-i", "100", "-x", "10", "--jit-warmup", "0", "--timeout-s", "60").get(90, TimeUnit.SECONDS);
        Sides.Run l = listener.get(90, TimeUnit.SECONDS);
        assertEquals(0, c.code(), c.err() + c.out());
        assertEquals(0, l.code(), l.err() + l.out());
        assertTrue(c.out().contains("# rdmaflux latency: provider ucx, fabric tcp, 2 rail(s)"), c.out());
        assertTrue(c.out().lines().anyMatch(x -> x.matches("65536 +[0-9.]+ +[0-9.]+ +[0-9.]+")), c.out());
        assertTrue(l.out().contains("over 2 rails, ucx provider, UCX tcp between processes"), l.out());
    }

    @Test
    void pipelineStreamsAFileBetweenTwoSidesOverUcxTcpAndBothVerifyIt() throws Exception {
        assumeUcx();
        Path file = dir.resolve("random.bin");
        byte[] bytes = new byte[3 * 1024 * 1024 + 333];
        new Random(23).nextBytes(bytes);
        Files.write(file, bytes);
        Sides.Output receiverOut = new Sides.Output();
        CompletableFuture<Sides.Run> receiver = sides.start(receiverOut, "pipeline", "--provider", "ucx", "--listen", "127.0.0.1:0", "--rails", "2",
            "--timeout-s", "60", "--no-progress");
        String at = Sides.awaitListening(receiverOut, receiver);
        Sides.Run s = sides.start(new Sides.Output(), "pipeline", "--provider", "ucx", "--connect", at, file.toString(), "--rails", "2",
            "--chunk-kib", "64", "--timeout-s", "60", "--no-progress", "--report-dir", dir.resolve("reports").toString()).get(90, TimeUnit.SECONDS);
        Sides.Run r = receiver.get(90, TimeUnit.SECONDS);
        assertEquals(0, s.code(), s.err() + s.out());
        assertEquals(0, r.code(), r.err() + r.out());
        assertTrue(r.out().contains("OK, verified"), r.out());
        assertTrue(s.out().contains("OK, verified by the receiver"), s.out());
        assertTrue(s.out().contains("2 rails, ucx provider, UCX tcp between processes"), s.out());
    }

    @Test
    void optionsUcxCannotHonourAreRefusedByName() {
        String[][] cases = {
            {"bench put-bw --provider ucx --listen 127.0.0.1:0", "put-bw between two processes builds its queue pairs on the soft provider"},
            {"bench latency --provider ucx --fabric mem", "--fabric mem is not a fabric of the ucx provider; use --fabric sm"},
            {"bench bw --provider ucx --rail-rates 100", "the ucx provider's rails cannot be shaped"},
            {"bench bw --provider ucx --listen 127.0.0.1:0 --addresses 127.0.0.1", "--provider ucx takes no --addresses: UCX picks its interfaces"},
            {"bench bw --provider ucx --listen 127.0.0.1:0 --fabric net", "--fabric net is not a fabric of the ucx provider"},
            {"pipeline --provider ucx --latency-us 10", "the ucx provider's rails cannot be shaped"},
            {"pipeline --provider ucx --fabric ib", "--fabric ib is not a fabric of the ucx provider"},
            {"pipeline --provider ucx --connect 127.0.0.1:1 --addresses 127.0.0.1", "--provider ucx takes no --addresses"},
            {"pipeline --fabric tcp", "--fabric tcp applies to --provider ucx"},
            {"pipeline --provider verbs", "--provider verbs is not one the pipeline runs on; use soft or ucx"},
        };
        for (String[] c : cases) {
            List<String> args = new ArrayList<>(List.of(c[0].split(" ")));
            if (args.get(0).equals("pipeline")) {
                args.addAll(1, List.of("--no-progress", "--report-dir", dir.resolve("reports").toString()));
            }
            Sides.Run r = Sides.run(args.toArray(new String[0]));
            assertEquals(1, r.code(), c[0] + ": " + r.err() + r.out());
            assertTrue(r.oneLineError().contains(c[1]), c[0] + ": '" + c[1] + "' missing in: " + r.err());
        }
    }
}
