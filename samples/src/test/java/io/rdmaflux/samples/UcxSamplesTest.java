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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * {@code bench} and {@code pipeline} on the {@code ucx} provider (module verbs-ucx): both hosts in this
 * JVM over UCX shared memory and over UCX's tcp transport. The runs are skipped, with the reason,
 * where the system's UCX library is missing; the refusals of options UCX cannot honour run everywhere.
 */
class UcxSamplesTest {
    @TempDir
    Path dir;

    @AfterEach
    void nothingLeaked() {
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
    void optionsUcxCannotHonourAreRefusedByName() {
        String[][] cases = {
            {"bench put-bw --provider ucx", "put-bw/get-bw build their queue pairs on the soft provider; drop --provider ucx"},
            {"bench latency --provider ucx --fabric mem", "--fabric mem is not a fabric of the ucx provider; use --fabric sm"},
            {"bench bw --provider ucx --rail-rates 100", "the ucx provider's rails cannot be shaped"},
            {"bench bw --provider ucx --listen 127.0.0.1:0", "--provider ucx runs both ends in this JVM"},
            {"pipeline --provider ucx --latency-us 10", "the ucx provider's rails cannot be shaped"},
            {"pipeline --provider ucx --fabric ib", "--fabric ib is not a fabric of the ucx provider"},
            {"pipeline --provider ucx --connect 127.0.0.1:1", "--provider ucx runs both hosts in this JVM"},
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
