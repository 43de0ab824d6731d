package io.rdmaflux.samples;

import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command line end to end: the pipeline verifies real files; bad input gives one line and a non-zero exit. */
class MainTest {
    @TempDir
    Path dir;

    private String out;
    private String err;

    @AfterEach
    void nothingLeaked() {
        VerbsLeakCheck.assertNoSoftLeaks();
    }

    private int run(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        out = o.toString(StandardCharsets.UTF_8);
        err = e.toString(StandardCharsets.UTF_8);
        return code;
    }

    private String[] pipeline(String... extra) {
        List<String> a = new ArrayList<>(List.of("pipeline", "--no-progress", "--report-dir", dir.resolve("reports").toString()));
        a.addAll(List.of(extra));
        return a.toArray(new String[0]);
    }

    private void assertOneLineError(int code, String... fragments) {
        assertTrue(code != 0, "exit code " + code);
        String[] lines = err.strip().split("\n");
        assertEquals(1, lines.length, "one line expected, got:\n" + err);
        for (String f : fragments) {
            assertTrue(err.contains(f), "'" + f + "' missing in: " + err);
        }
        assertFalse(err.contains("\tat "), "no stack trace without --verbose");
    }

    @Test
    void pipelineStreamsAGeneratedFileOverTwoRailsAndVerifiesIt() throws IOException {
        Path file = dir.resolve("random.bin");
        byte[] bytes = new byte[3 * 1024 * 1024 + 12345];
        new Random(42).nextBytes(bytes);
        Files.write(file, bytes);
        int code = run(pipeline(file.toString(), "--rail-rates", "0,0", "--chunk-kib", "64"));
        assertEquals(0, code, err + out);
        assertTrue(out.contains("OK, verified"), out);
        assertTrue(out.contains("3.0 MiB of " + file), out);
        assertTrue(out.contains("rail 1"), out);
        assertFalse(out.contains("efficiency"), "unshaped rails have no capacity to compare with: " + out);
        try (var reports = Files.list(dir.resolve("reports"))) {
            Path report = reports.findFirst().orElseThrow();
            String html = Files.readString(report);
            assertTrue(html.contains("<svg") && html.contains("polyline"), "report has inline SVG charts");
        }
    }

    /**
     * The log's format, not the weights' values: how far adaptive striping has moved within the ~0.15 s this
     * transfer takes under real-time shaping depends on how the machine schedules the threads (the
     * convergence itself is tested in virtual time in rail-striping).
     */
    @Test
    void weightsOutLogsTheStripingWeightsOfTheInJvmSenderOverTimeOneSamplePerLine() throws IOException {
        Path file = dir.resolve("random.bin");
        byte[] bytes = new byte[16 * 1024 * 1024];
        new Random(3).nextBytes(bytes);
        Files.write(file, bytes);
        Path weights = dir.resolve("logs").resolve("weights.txt");
        // 1 ms either side: the log writes whole microseconds, and a double holds epoch seconds to about 0.1 us
        double before = System.currentTimeMillis() / 1e3 - 1e-3;
        int code = run(pipeline(file.toString(), "--rail-rates", "96,24", "--chunk-kib", "256", "--weights-out", weights.toString()));
        double after = System.currentTimeMillis() / 1e3 + 1e-3;
        assertEquals(0, code, err + out);
        assertTrue(out.lines().anyMatch(l -> l.matches(" +policy weights +0\\.\\d\\d / 0\\.\\d\\d .*")), out);
        assertTrue(out.lines().anyMatch(l -> l.matches(" +efficiency +[01]\\.\\d\\d of the rails' capacity \\(120 MiB/s shaped\\), over the whole run")),
            out);
        assertTrue(out.lines().anyMatch(l -> l.matches(" +elapsed +\\d+\\.\\d\\d s \\(the first chunk arrived \\d+ ms after the start\\)")), out);
        List<String> lines = Files.readAllLines(weights);
        assertTrue(lines.get(0).startsWith("# striping weights of pipeline (in-JVM), policy adaptive, every 20 ms"), lines.get(0));
        // close() writes the last sample, whatever happened before; the periodic ones come only once the
        // sampling thread gets the CPU, which on a loaded machine can be after this ~0.15 s transfer ended
        assertTrue(lines.size() >= 2, "the header and at least the last sample: " + lines);
        double previous = before;
        for (String l : lines.subList(1, lines.size())) {
            assertTrue(l.matches("\\d+\\.\\d{6} \\d\\.\\d{4} \\d\\.\\d{4}"), "epoch seconds and one share per rail: " + l);
            String[] f = l.split(" ");
            double at = Double.parseDouble(f[0]);
            assertTrue(at >= previous && at <= after, "epoch seconds in order, within the run: " + l + " after " + previous);
            previous = at;
            double rail1 = Double.parseDouble(f[1]);
            double rail2 = Double.parseDouble(f[2]);
            assertTrue(rail1 >= 0 && rail1 <= 1 && rail2 >= 0 && rail2 <= 1, "shares in [0, 1]: " + l);
            assertEquals(1.0, rail1 + rail2, 0.001, l);
        }
    }

    @Test
    void recordModeCountsLinesAndWordsOfADirectory() throws IOException {
        Path texts = Files.createDirectories(dir.resolve("texts"));
        StringBuilder a = new StringBuilder();
        for (int i = 0; i < 5000; i++) {
            a.append("alpha beta ").append(i % 2 == 0 ? "gamma" : "Alpha").append('\n');
        }
        Files.writeString(texts.resolve("a.txt"), a);
        Files.writeString(texts.resolve("b.txt"), "delta\n");
        int code = run(pipeline(texts.toString(), "--records", "--rail-rates", "0,0", "--chunk-kib", "4"));
        assertEquals(0, code, err + out);
        assertTrue(out.contains("5001 lines, 15001 words, 4 distinct"), out);
        assertTrue(out.contains("alpha=7500"), out);
        assertTrue(out.contains("OK, verified"), out);
    }

    @Test
    void kotlinRecordPipelineCountsTheSameRecords() throws IOException {
        Path f = dir.resolve("t.txt");
        Files.writeString(f, "one two\nthree one\n".repeat(1000));
        int code = run("records-kt", f.toString());
        assertEquals(0, code, err + out);
        assertTrue(out.contains("2000 lines, 4000 words, 3 distinct"), out);
        assertTrue(out.contains("one=2000"), out);
        assertTrue(out.contains("OK, verified"), out);
    }

    @Test
    void missingFileIsOneLineAndExitCode1() {
        assertOneLineError(run(pipeline(dir.resolve("nope.bin").toString())), "nope.bin does not exist");
        assertEquals(1, run(pipeline(dir.resolve("nope.bin").toString())));
    }

    @Test
    void missingFileInKotlinPipelineIsOneLine() {
        assertOneLineError(run("records-kt", dir.resolve("nope.txt").toString()), "nope.txt does not exist");
    }

    @Test
    void unreadableFileIsOneLine() throws IOException {
        Path f = Files.writeString(dir.resolve("secret.bin"), "x");
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("---------"));
        Assumptions.assumeFalse(Files.isReadable(f), "running as root: every file is readable");
        assertOneLineError(run(pipeline(f.toString())), "secret.bin is not readable");
    }

    @Test
    void emptyInputIsOneLine() throws IOException {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertOneLineError(run(pipeline(empty.toString())), "holds no bytes");
    }

    /** Reliable UD on every rail, then RC send/receive on one and UD on the other: the SHA-256 of what arrived is the file's. */
    @Test
    void pipelineStreamsOverReliableUdAndAPerRailMixAndVerifiesIt() throws IOException {
        Path file = dir.resolve("random-ud.bin");
        byte[] bytes = new byte[2 * 1024 * 1024 + 777];
        new Random(7).nextBytes(bytes);
        Files.write(file, bytes);
        for (String transport : List.of("ud", "rc,ud")) {
            int code = run(pipeline(file.toString(), "--rail-rates", "0,0", "--chunk-kib", "64", "--transport", transport));
            assertEquals(0, code, transport + ": " + err + out);
            assertTrue(out.contains("OK, verified"), transport + ": " + out);
            assertTrue(out.contains("2.0 MiB of " + file), transport + ": " + out);
        }
    }

    @Test
    void pipelineStreamsOverRailsOfTwoDevices() throws IOException {
        Path file = dir.resolve("two-devices.bin");
        byte[] bytes = new byte[2 * 1024 * 1024 + 777];
        new Random(7).nextBytes(bytes);
        Files.write(file, bytes);
        int code = run(pipeline(file.toString(), "--rails", "tx0:1,tx1:1", "--rail-rates", "0,0", "--chunk-kib", "64"));
        assertEquals(0, code, err + out);
        assertTrue(out.contains("OK, verified"), out);
        assertTrue(out.contains("rail 1"), out);
    }

    @Test
    void badFlagValuesAreOneLineWithTheValue() throws IOException {
        Path f = Files.writeString(dir.resolve("f.txt"), "x\n");
        assertOneLineError(run(pipeline(f.toString(), "--rails", "0")), "--rails must be in 1..16 but it was 0");
        assertOneLineError(run(pipeline(f.toString(), "--eager", "yes")), "--eager must be on or off but it was yes");
        assertOneLineError(run(pipeline(f.toString(), "--transport", "roce")), "--transport must be rc, eager, ud or rc-dr", "but it was 'roce'");
        assertEquals(1, run(pipeline(f.toString(), "--transport", "roce")));
        assertOneLineError(run(pipeline(f.toString(), "--transport", "rc,rc,ud")), "--transport gives 3 kinds (rc,rc,ud) for 2 rails");
        assertOneLineError(run(pipeline(f.toString(), "--transport", "ud", "--eager", "on")), "--eager on conflicts with --transport ud");
        assertEquals(1, run(pipeline(f.toString(), "--transport", "eager", "--eager", "off")));
        assertTrue(err.contains("--eager off conflicts with --transport eager"), err);
        assertOneLineError(run(pipeline(f.toString(), "--rail-rates", "1,2,3")), "3 rates for 2 rails");
        assertOneLineError(run(pipeline(f.toString(), "--policy", "fastest")), "unknown --policy 'fastest'");
        assertOneLineError(run(pipeline(f.toString(), "--policy", "weighted:1")), "1 weights for 2 rails");
        assertOneLineError(run(pipeline(f.toString(), "--chunk-kib", "0")), "--chunk-kib must be in 1..1024 but it was 0");
        assertOneLineError(run(pipeline(f.toString(), "--policy", "rr", "--weights-out", dir.resolve("w.txt").toString())),
            "--weights-out needs a policy with weights (adaptive, even, weighted:.., window-rr:N) but --policy was rr");
        assertOneLineError(run(pipeline(f.toString(), "--weights-out", f.resolve("w.txt").toString())), "cannot write --weights-out " + f.resolve("w.txt"),
            "give a writable file path");
        assertOneLineError(run(pipeline(f.toString(), "--rails", "two")), "--rails two", "'two' is not device:port[:paths]");
        assertOneLineError(run(pipeline(f.toString(), "--rails", "tx0:1,rx0:1")), "names device 'rx0'");
        assertOneLineError(run("pipeline", "--no-such-flag"), "--no-such-flag");
    }

    @Test
    void benchRejectsBadTestsSizesAndProviders() {
        assertOneLineError(run("bench", "speed"), "unknown test 'speed'");
        assertOneLineError(run("bench", "bw", "--sizes", "8:1"), "--sizes 8:1");
        assertOneLineError(run("bench", "bw", "--sizes", "lots"), "--sizes lots");
        assertOneLineError(run("bench", "bw", "--fabric", "carrier-pigeon"), "--fabric carrier-pigeon");
        assertOneLineError(run("bench", "latency", "--provider", "nosuch"), "nosuch");
    }

    @Test
    void verboseAddsTheStackTrace() {
        int code = run(pipeline(dir.resolve("nope.bin").toString(), "--verbose"));
        assertEquals(1, code);
        assertTrue(err.contains("\tat "), err);
    }

    @Test
    void benchPrintsOsuTables() {
        assertEquals(0, run("bench", "bw", "--sizes", "1k,64k", "--iterations", "5", "--rails", "2"), err);
        assertTrue(out.contains("# Size      Bandwidth (MB/s)"), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("65536")), out);
        assertEquals(0, run("bench", "latency", "--sizes", "8", "--iterations", "50"), err);
        assertTrue(out.contains("# Size          Latency (us)"), out);
        assertTrue(out.lines().anyMatch(l -> l.startsWith("8 ")), out);
        assertEquals(0, run("bench", "bibw", "--sizes", "4k", "--iterations", "5"), err);
        assertEquals(0, run("bench", "msg-rate", "--iterations", "5"), err);
        assertTrue(out.contains("Messages/s"), out);
    }
}
