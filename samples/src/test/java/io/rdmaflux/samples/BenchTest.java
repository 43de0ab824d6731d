package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench} end to end: one-sided put-bw/get-bw in one JVM on the mem and net fabrics, every
 * test between a {@code --listen} and a {@code --connect} side over loopback (real sockets, port 0,
 * bounded waits on real conditions), and bad input as one line with exit code 1 (2 for values
 * picocli cannot convert).
 */
class BenchTest {
    private VerbsLeakCheck leaks;
    private final Sides sides = new Sides();

    @BeforeEach
    void snapshot() {
        leaks = VerbsLeakCheck.begin();
    }

    @AfterEach
    void nothingLeaked() throws InterruptedException {
        sides.joinAll();
        leaks.assertClean();
    }

    private static void assertTable(Sides.Run r, String head, int... sizes) {
        assertEquals(0, r.code(), r.err() + r.out());
        assertTrue(r.out().contains(head), r.out());
        for (int size : sizes) {
            assertTrue(r.out().lines().anyMatch(l -> l.matches(size + " +[0-9.]+.*")), size + " row missing in:\n" + r.out());
        }
    }

    @Test
    void putBwAndGetBwOnTheMemFabricPrintTheTableAndVerifyTheBytes() {
        Sides.Run put = Sides.run("bench", "put-bw", "--rails", "2", "--sizes", "1k,64k,256k", "--iterations", "3", "--window", "8");
        assertTable(put, "# Size      Bandwidth (MB/s)", 1024, 65536, 262144);
        assertTrue(put.out().contains("# rdmaflux put-bw: provider soft, fabric mem, 2 rail(s)"), put.out());
        assertTrue(put.out().contains("2 rail(s), policy load-balanced") && put.out().contains("(RdmaConnection put/get, eager off)"), put.out());
        assertTrue(put.out().contains("# verified: the 2097152 bytes put into the target match the pattern"), put.out());
        Sides.Run get = Sides.run("bench", "get-bw", "--sizes", "3,4k", "--iterations", "2", "--window", "4", "--policy", "rr");
        assertTable(get, "# Size      Bandwidth (MB/s)", 3, 4096);
        assertTrue(get.out().contains("# verified: the 16384 bytes got from the target match the pattern"), get.out());
    }

    @Test
    void putGetBwRunsPutsAndGetsAtOnceAgainstEachAloneAndVerifiesBothHalves() {
        Sides.Run r = Sides.run("bench", "put-get-bw", "--rails", "2", "--sizes", "3,4k,64k", "--iterations", "2", "--warmup", "1",
            "--window", "4", "--jit-warmup", "0");
        assertTable(r, PutGetBench.COLUMNS, 3, 4096, 65536);
        assertTrue(r.out().contains("# rdmaflux put-get-bw: provider soft, fabric mem, 2 rail(s), policy load-balanced"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("65536( +[0-9.]+){4}")), r.out());
        assertTrue(r.out().contains("# verified: the 262144 bytes put into the target and the 262144 bytes got from it match the pattern"), r.out());
        Sides.Run peer = Sides.run("bench", "put-get-bw", "--connect", "127.0.0.1:9");
        assertEquals(1, peer.code(), peer.err() + peer.out());
        assertTrue(peer.err().contains("put-get-bw runs both ends in this JVM"), peer.err());
    }

    @Test
    void putLatencyAndGetLatencyGoThroughTheConnection() {
        for (String t : List.of("put-latency", "get-latency")) {
            Sides.Run r = Sides.run("bench", t, "--rails", "2", "--sizes", "64,4k,64k", "--iterations", "20", "--warmup", "2",
                "--jit-warmup", "0");
            assertTable(r, "# Size          Latency (us)    p50 (us)    p99 (us)", 64, 4096, 65536);
            assertTrue(r.out().contains("# rdmaflux " + t + ": provider soft, fabric mem, 2 rail(s)"), r.out());
            assertTrue(r.out().contains("# verified:"), r.out());
        }
    }

    @Test
    void fopLatencyAndCasLatencyRunAtomicsThroughTheConnection() {
        for (String t : List.of("fop-latency", "cas-latency")) {
            Sides.Run r = Sides.run("bench", t, "--rails", "2", "--iterations", "30", "--warmup", "2", "--jit-warmup", "0");
            assertTable(r, "# Size          Latency (us)    p50 (us)    p99 (us)", 8);
            assertTrue(r.out().contains("# rdmaflux " + t + ": provider soft, fabric mem, 2 rail(s)"), r.out());
            assertTrue(r.out().contains("# verified: 32 "), r.out());
        }
    }

    @Test
    void putLatencyAndGetLatencyRunBetweenAListenerAndAConnector() throws Exception {
        for (String t : List.of("put-latency", "get-latency")) {
            Sides.Run[] r = pair(t, List.of(), List.of("--sizes", "64,4k", "--iterations", "20", "--warmup", "2", "--jit-warmup", "0"));
            assertEquals(0, r[0].code(), t + " listener: " + r[0].err() + r[0].out());
            assertTable(r[1], "# Size          Latency (us)    p50 (us)    p99 (us)", 64, 4096);
            assertTrue(r[1].out().contains("(RdmaConnection put/get, eager off), peer 127.0.0.1:"), r[1].out());
            assertTrue(r[1].out().contains("# verified: the 4096 bytes"), r[1].out());
        }
    }

    @Test
    void putBwRunsOnTheNetFabricInOneJvm() {
        Sides.Run r = Sides.run("bench", "put-bw", "--fabric", "net", "--addresses", "127.0.0.1,127.0.0.1", "--sizes", "4k,128k",
            "--iterations", "2", "--window", "4", "--policy", "load-balanced");
        assertTable(r, "# Size      Bandwidth (MB/s)", 4096, 131072);
        assertTrue(r.out().contains("fabric net, 2 rail(s), policy load-balanced"), r.out());
        assertTrue(r.out().contains("window 4, idle low-latency (RdmaConnection put/get, eager off)"), "the bench polls by default: " + r.out());
        assertTrue(r.out().contains("# verified:"), r.out());
    }

    /** Starts {@code test} listening on port 0 and {@code test} connecting to it; returns {listener, connector}. */
    private Sides.Run[] pair(String test, List<String> listenerArgs, List<String> connectorArgs) throws Exception {
        Sides.Output lo = new Sides.Output();
        List<String> l = new ArrayList<>(List.of("bench", test, "--listen", "127.0.0.1:0", "--addresses", "127.0.0.1,127.0.0.1", "--timeout-s", "60"));
        l.addAll(listenerArgs);
        CompletableFuture<Sides.Run> listener = sides.start(lo, l.toArray(new String[0]));
        String at = Sides.awaitListening(lo, listener);
        List<String> c = new ArrayList<>(List.of("bench", test, "--connect", at, "--addresses", "127.0.0.1,127.0.0.1", "--timeout-s", "60"));
        c.addAll(connectorArgs);
        Sides.Run connector = sides.start(new Sides.Output(), c.toArray(new String[0])).get(90, TimeUnit.SECONDS);
        return new Sides.Run[] {listener.get(90, TimeUnit.SECONDS), connector};
    }

    @Test
    void everyTwoSidedTestRunsBetweenAListenerAndAConnectorAndTheListenerExitsByItself() throws Exception {
        String[][] tests = {
            {"latency", "# Size          Latency (us)    p50 (us)    p99 (us)"},
            {"bw", "# Size      Bandwidth (MB/s)"},
            {"bibw", "# Size      Bandwidth (MB/s)"},
            {"msg-rate", "# Size                  MB/s        Messages/s"},
        };
        for (String[] t : tests) {
            Sides.Run[] r = pair(t[0], List.of(), List.of("--sizes", "8,64k", "--iterations", "4", "--window", "8"));
            assertEquals(0, r[0].code(), t[0] + " listener: " + r[0].err() + r[0].out());
            assertTrue(r[0].out().contains("rdmaflux bench " + t[0] + ": served 2 size(s) (8..65536 bytes), 4 iterations"), r[0].out());
            assertTable(r[1], t[1], 8, 65536);
            assertTrue(r[1].out().contains("fabric net, 2 rail(s)") && r[1].out().contains(", peer 127.0.0.1:"), r[1].out());
        }
    }

    @Test
    void latencyRunsWithTheEagerRingOnAndOff() throws Exception {
        for (String eager : List.of("on", "off")) {
            Sides.Run r = sides.start(new Sides.Output(), "bench", "latency", "--sizes", "8,64", "--iterations", "20", "--eager", eager)
                .get(90, TimeUnit.SECONDS);
            assertTable(r, "# Size          Latency (us)    p50 (us)    p99 (us)", 8, 64);
        }
    }

    /**
     * {@code --transport ud} (every rail reliable UD, insisted on: a node without the ud-reliable provider would refuse
     * the connection): the session checks every message's length and count (a lost, duplicated or
     * cut message fails the run), so a complete table is the bytes arriving.
     */
    @Test
    void bwRunsOverReliableUdInOneJvm() throws Exception {
        Sides.Run bw = sides.start(new Sides.Output(), "bench", "bw", "--transport", "ud", "--rails", "2", "--sizes", "8,64k",
            "--iterations", "4", "--window", "8").get(90, TimeUnit.SECONDS);
        assertTable(bw, "# Size      Bandwidth (MB/s)", 8, 65536);
        assertTrue(bw.out().contains("fabric mem, 2 rail(s), policy adaptive, transport ud,"), bw.out());
    }

    @Test
    void aTwoRailLatencyRunSaysAfterEachSizeHowItsPingsWereStripedAndWarmsUpAsAsked() throws Exception {
        Sides.Run[] r = pair("latency", List.of("--policy", "even", "--sizes", "256k"),
            List.of("--policy", "even", "--sizes", "8,256k", "--iterations", "5", "--warmup", "3"));
        assertEquals(0, r[0].code(), r[0].err() + r[0].out());
        assertTable(r[1], "# Size          Latency (us)    p50 (us)    p99 (us)", 8, 262144);
        List<String> rails = r[1].out().lines().filter(l -> l.startsWith("# rails: sent ")).toList();
        assertEquals(2, rails.size(), r[1].out());
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("# rails: sent ([0-9.]+) % / ([0-9.]+) % of ([0-9.]+) MiB, weights 0\\.50 / 0\\.50")
            .matcher(rails.get(1));
        assertTrue(m.matches(), rails.get(1));
        // 256 KiB is above the 64 KiB switchover: even striping halves every ping
        assertEquals(50.0, Double.parseDouble(m.group(1)), 5.0, rails.get(1));
        assertEquals(50.0, Double.parseDouble(m.group(2)), 5.0, rails.get(1));
        // 3 warm-up + 5 measured pings of 256 KiB = 2 MiB (the default warm-up, 10, would make it 3.75)
        assertEquals(2.0, Double.parseDouble(m.group(3)), 0.15, rails.get(1));
    }

    /**
     * Through the connection's one-sided API between two processes: the listener exposes a region, the
     * connector's puts land in it (the listener checks the pattern) or its gets read it (the connector checks).
     */
    @Test
    void putBwAndGetBwRunBetweenAListenerAndAConnector() throws Exception {
        for (String t : List.of("put-bw", "get-bw")) {
            Sides.Run[] r = pair(t, List.of(), List.of("--sizes", "1k,64k", "--iterations", "2", "--window", "4"));
            assertEquals(0, r[0].code(), t + " listener: " + r[0].err() + r[0].out());
            assertTrue(r[0].out().contains("served a 262144-byte region over 2 rails"), r[0].out());
            assertTrue(r[0].out().contains(t.equals("put-bw") ? "the 262144 bytes put into it match the pattern" : "the peer checks what it read"),
                r[0].out());
            assertTable(r[1], "# Size      Bandwidth (MB/s)", 1024, 65536);
            assertTrue(r[1].out().contains("(RdmaConnection put/get, eager off), peer 127.0.0.1:"), r[1].out());
            assertTrue(r[1].out().contains("# verified: the 262144 bytes " + (t.equals("put-bw") ? "put into the target" : "got from the target")),
                r[1].out());
        }
    }

    @Test
    void aListenerRefusesAnotherTestAndBothSidesSayWhy() throws Exception {
        Sides.Output lo = new Sides.Output();
        CompletableFuture<Sides.Run> listener = sides.start(lo, "bench", "bw", "--listen", "127.0.0.1:0", "--timeout-s", "60");
        String at = Sides.awaitListening(lo, listener);
        Sides.Run c = sides.start(new Sides.Output(), "bench", "latency", "--connect", at, "--timeout-s", "60").get(90, TimeUnit.SECONDS);
        Sides.Run l = listener.get(90, TimeUnit.SECONDS);
        assertEquals(1, c.code());
        assertTrue(c.oneLineError().contains("the listener at " + at + " refused: it serves bw but the client asked for latency"), c.err());
        assertEquals(1, l.code());
        assertTrue(l.oneLineError().contains("refused the peer: it serves bw"), l.err());
    }

    @Test
    void aOneSidedListenerRefusesAnotherTestAndBothSidesSayWhy() throws Exception {
        Sides.Output lo = new Sides.Output();
        CompletableFuture<Sides.Run> listener = sides.start(lo, "bench", "put-bw", "--listen", "127.0.0.1:0", "--timeout-s", "60");
        String at = Sides.awaitListening(lo, listener);
        Sides.Run wrong = sides.start(new Sides.Output(), "bench", "get-bw", "--connect", at, "--timeout-s", "60").get(90, TimeUnit.SECONDS);
        Sides.Run l = listener.get(90, TimeUnit.SECONDS);
        assertEquals(1, wrong.code(), wrong.err() + wrong.out());
        assertTrue(wrong.oneLineError().contains("the listener at " + at + " refused: it serves put-bw but the client asked for get-bw; "
            + "run the same test on both sides"), wrong.err());
        assertEquals(1, l.code(), l.err() + l.out());
        assertTrue(l.oneLineError().contains("refused the peer: it serves put-bw but the client asked for get-bw"), l.err());
    }

    @Test
    void aConnectorAskingForLargerMessagesThanTheListenerAcceptsIsOneLine() throws Exception {
        Sides.Output lo = new Sides.Output();
        CompletableFuture<Sides.Run> listener = sides.start(lo, "bench", "bw", "--listen", "127.0.0.1:0", "--sizes", "1k", "--timeout-s", "60");
        String at = Sides.awaitListening(lo, listener);
        Sides.Run c = sides.start(new Sides.Output(), "bench", "bw", "--connect", at, "--sizes", "128k", "--timeout-s", "60").get(90, TimeUnit.SECONDS);
        Sides.Run l = listener.get(90, TimeUnit.SECONDS);
        assertEquals(1, c.code());
        assertTrue(c.oneLineError().contains("accepts messages up to 65536 bytes but --sizes goes to 131072"), c.err());
        assertEquals(1, l.code());
        assertTrue(l.oneLineError().contains("the peer closed the connection before its HELLO"), l.err());
    }

    @Test
    void anUnreachablePeerIsOneLineForTwoSidedAndOneSidedTests() throws Exception {
        String at = "127.0.0.1:" + Sides.freeLoopbackPort();
        for (String t : List.of("bw", "put-bw")) {
            Sides.Run r = sides.start(new Sides.Output(), "bench", t, "--connect", at, "--timeout-s", "20").get(60, TimeUnit.SECONDS);
            assertEquals(1, r.code(), r.out());
            String err = r.oneLineError();
            assertTrue(err.contains("cannot connect to " + at) && err.contains("bench " + t + " --listen " + at), err);
        }
        Sides.Run verbose = sides.start(new Sides.Output(), "bench", "bw", "--connect", at, "--timeout-s", "20", "--verbose").get(60, TimeUnit.SECONDS);
        assertEquals(1, verbose.code());
        assertTrue(verbose.err().contains("\tat "), "--verbose adds the stack trace: " + verbose.err());
    }

    @Test
    void aListenerNobodyConnectsToGivesUpAtTheTimeout() throws Exception {
        CompletableFuture<Sides.Run> twoSided = sides.start(new Sides.Output(), "bench", "bw", "--listen", "127.0.0.1:0", "--timeout-s", "1");
        CompletableFuture<Sides.Run> oneSided = sides.start(new Sides.Output(), "bench", "get-bw", "--listen", "127.0.0.1:0", "--timeout-s", "1");
        Sides.Run a = twoSided.get(60, TimeUnit.SECONDS);
        Sides.Run b = oneSided.get(60, TimeUnit.SECONDS);
        assertEquals(1, a.code());
        assertTrue(a.oneLineError().contains("no peer connected to 127.0.0.1:0 within 1 s (--timeout-s)"), a.err());
        assertEquals(1, b.code());
        assertTrue(b.oneLineError().contains("no peer connected to 127.0.0.1:0 within 1 s (--timeout-s)"), b.err());
    }

    @Test
    void bwStripesOverTwoDevicesOrTwoPortsOfOne() {
        Sides.Run devices = Sides.run("bench", "bw", "--devices", "2", "--rails", "2", "--sizes", "1k,256k", "--iterations", "3", "--window", "8");
        assertTable(devices, "# Size      Bandwidth (MB/s)", 1024, 262144);
        assertTrue(devices.out().contains("2 rail(s) on 2 devices x 1 port, rails tx0:1,tx1:1"), devices.out());
        Sides.Run named = Sides.run("bench", "bw", "--rails", "tx0:1,tx1:1", "--sizes", "256k", "--iterations", "3", "--window", "8");
        assertTable(named, "# Size      Bandwidth (MB/s)", 262144);
        Sides.Run ports = Sides.run("bench", "bw", "--rails", "tx0:1,tx0:2", "--sizes", "256k", "--iterations", "3", "--window", "8");
        assertTable(ports, "# Size      Bandwidth (MB/s)", 262144);
        assertTrue(ports.out().contains("1 device x 2 ports"), ports.out());
        Sides.Run offload = Sides.run("bench", "bw", "--devices", "2", "--rails", "2", "--nic-threads", "per-device", "--sizes", "256k",
            "--iterations", "3", "--window", "8");
        assertTable(offload, "# Size      Bandwidth (MB/s)", 262144);
        assertTrue(offload.out().contains("2 devices x 1 port, rails tx0:1,tx1:1, a NIC thread per device"), offload.out());
    }

    @Test
    void badFlagValuesAreOneLineNamingTheValue() {
        String[][] cases = {
            {"bw --listen 127.0.0.1:1 --connect 127.0.0.1:2", "--listen and --connect exclude each other"},
            {"bw --connect 127.0.0.1:0", "--connect 127.0.0.1:0: port 0 is for --listen"},
            {"bw --connect nohostport", "--connect nohostport is not host:port"},
            {"put-bw --listen 127.0.0.1:70000", "--listen 127.0.0.1:70000: port must be in 0..65535 but it was 70000"},
            {"bw --fabric mem --listen 127.0.0.1:0", "--listen/--connect run over the IP fabric; drop --fabric mem"},
            {"bw --addresses 127.0.0.1", "--addresses applies to --fabric net and --listen/--connect only"},
            {"latency --fabric net --idle fast", "--idle must be low-latency or backoff but it was 'fast'"},
            {"bw --fabric net --rails 3 --addresses 127.0.0.1,127.0.0.1", "--rails 3 disagrees with --addresses 127.0.0.1,127.0.0.1 (2 rails)"},
            {"bw --fabric net --addresses 127.0.0.1,,127.0.0.1", "--addresses 127.0.0.1,,127.0.0.1 has an empty entry"},
            {"bw --rails 17", "--rails must be in 1..16 but it was 17"},
            {"bw --rails soft0:1", "--rails soft0:1 names device 'soft0'; the in-JVM soft run names the sender's NICs tx0, tx1"},
            {"bw --rails tx0:1,tx3:1 --devices 2", "names device tx3 but --devices 2 gives tx0..tx1"},
            {"bw --rails tx0:x", "rail 'tx0:x' has port 'x', not a whole number"},
            {"bw --devices 0", "--devices must be in 1..16 but it was 0"},
            {"put-bw --devices 2 --rails 2", "and --devices apply to the in-JVM soft run, not put-bw"},
            {"bw --fabric net --devices 2", "and --devices apply to the in-JVM soft run, not --fabric net"},
            {"latency --eager maybe", "--eager must be on or off but it was maybe"},
            {"bw --transport tcp", "--transport must be rc, eager, ud or rc-dr (or a comma list of them, one per rail) but it was 'tcp'"},
            {"bw --rails 2 --transport rc,udp", "--transport must be rc, eager, ud or rc-dr (or a comma list of them, one per rail) but one was 'udp'"},
            {"bw --rails 2 --transport rc,ud,ud", "--transport gives 3 kinds (rc,ud,ud) for 2 rails; give one kind for every rail or one per rail"},
            {"latency --transport ud --eager on", "--eager on conflicts with --transport ud: no rail is eager"},
            {"latency --transport eager --eager off", "--eager off conflicts with --transport eager: a rail is eager"},
            {"latency --transport ud --eager maybe", "--eager must be on or off but it was maybe"},
            {"put-bw --transport ud", "--transport applies to the two-sided tests (latency, bw, bibw, msg-rate), not put-bw"},
            {"bw --nic-threads two", "--nic-threads must be one or per-device but it was 'two'"},
            {"bw --fabric net --nic-threads per-device", "--nic-threads applies to the in-JVM soft run (--fabric mem) only; drop --nic-threads per-device"},
            {"bw --window 0", "--window must be in 1..4096 but it was 0"},
            {"put-bw --window 5000", "--window must be in 1..4096 but it was 5000"},
            {"bw --iterations 0", "--iterations must be >= 1 but it was 0"},
            {"latency --warmup -1", "--warmup must be in 0..1000000 but it was -1"},
            {"bw --jit-warmup -1", "--jit-warmup must be in 0..1000000 but it was -1"},
            {"bw -x 2000000", "--warmup must be in 0..1000000 but it was 2000000"},
            {"latency --json /nonexistent-dir/out.json", "--json /nonexistent-dir/out.json: the directory /nonexistent-dir does not exist"},
            {"bw --iterations 1000000 --window 4096", "--iterations 1000000 x --window 4096 is more than 2147483647 messages per size"},
            {"bw --sizes 3000m", "--sizes values must be in 1..64m but one was 3145728000"},
            {"latency --sizes 0", "--sizes values must be in 1..64m but one was 0"},
            {"bw --sizes 1:2:3", "--sizes 1:2:3: MIN:MAX with 1 <= MIN <= MAX required"},
            {"bw --sizes 99999999999999999999", "--sizes 99999999999999999999 is not MIN:MAX or a list of sizes"},
            {"bw --sizes 9999999999999m", "--sizes 9999999999999m is not MIN:MAX or a list of sizes"},
            {"bw --listen 127.0.0.1:0 --timeout-s 0", "--timeout-s must be in 1..86400 but it was 0"},
            {"put-bw --policy fastest", "unknown --policy 'fastest' for one-sided tests"},
            {"get-bw --policy weighted:1,2", "--policy weighted:1,2 gives 2 weights for 1 rails"},
            {"bw --policy fastest", "unknown --policy 'fastest'"},
            {"bw --rails 1 --rail-rates 1,2", "--rail-rates gives 2 rates for 1 rails"},
            {"bw --rail-rates -5", "--rail-rates values must be in 0..1000000 MiB/s (0 = unshaped) but one was -5"},
            {"bw --fabric net --addresses 203.0.113.7", "cannot bind the rails to --addresses 203.0.113.7"},
            {"put-bw --fabric net --addresses 203.0.113.7", "cannot bind the rails to --addresses 203.0.113.7"},
            {"bw --listen 203.0.113.7:0", "203.0.113.7"},
            {"get-bw --provider nosuch", "nosuch"},
            {"put_bandwidth", "unknown test 'put_bandwidth'; choose latency, bw, bibw, msg-rate, put-bw, get-bw, put-get-bw, put-latency, get-latency, "
                + "fop-latency or cas-latency"},
            {"fop-latency --sizes 16", "fop-latency measures 8-byte atomics only"},
            {"cas-latency --connect 127.0.0.1:9", "cas-latency runs both ends in this JVM"},
        };
        for (String[] c : cases) {
            List<String> args = new ArrayList<>(List.of("bench"));
            args.addAll(List.of(c[0].split(" ")));
            Sides.Run r = Sides.run(args.toArray(new String[0]));
            assertEquals(1, r.code(), c[0] + ": " + r.err() + r.out());
            String err = r.oneLineError();
            assertTrue(err.contains(c[1]), c[0] + ": '" + c[1] + "' missing in: " + err);
        }
        Sides.Run notANumber = Sides.run("bench", "bw", "--window", "many");
        assertEquals(2, notANumber.code());
        assertTrue(notANumber.oneLineError().contains("'many'"), notANumber.err());
    }

    @Test
    void helloRoundTripsAndMalformedControlMessagesAreRejected() {
        BenchWire.Hello h = new BenchWire.Hello(BenchCommand.Test.bibw, 64, new OsuSchedule(BenchCommand.Test.bibw, null, null, 100)
            .steps(List.of(1, 4096, 1 << 20), true));
        assertEquals(List.of(1, 4096, 1 << 20), h.sizes(), "the JIT warm-up step is not a printed size");
        RdmaMessage m = h.encode();
        try {
            assertEquals(h, BenchWire.Hello.decode(m));
        } finally {
            m.release();
        }
        byte[] bad = new byte[13 + 13];
        ByteBuffer.wrap(bad).putInt(BenchWire.HELLO).put((byte) 1).putInt(64).putInt(1).putInt(8).putInt(0).putInt(0).put((byte) 1);
        RdmaMessage zeroIterations = RdmaMessage.of(bad);
        try {
            UserError e = assertThrows(UserError.class, () -> BenchWire.Hello.decode(zeroIterations));
            assertTrue(e.getMessage().contains("step 0: size 8, warm-up 0, iterations 0"), e.getMessage());
        } finally {
            zeroIterations.release();
        }
        RdmaMessage go = BenchWire.go(1, 640);
        try {
            UserError e = assertThrows(UserError.class, () -> BenchWire.expectGo(go, 1, 1280));
            assertTrue(e.getMessage().contains("expected the peer's GO of 1280 messages for step #1"), e.getMessage());
            BenchWire.expectGo(go, 1, 640);
        } finally {
            go.release();
        }
        RdmaMessage junk = RdmaMessage.of(new byte[30]);
        try {
            UserError e = assertThrows(UserError.class, () -> BenchWire.Hello.decode(junk));
            assertTrue(e.getMessage().contains("is not a bench HELLO"), e.getMessage());
        } finally {
            junk.release();
        }
        RdmaMessage ack = BenchWire.ack(2, 99);
        try {
            UserError e = assertThrows(UserError.class, () -> BenchWire.expectAck(ack, 2, 100));
            assertTrue(e.getMessage().contains("expected the peer's ACK of 100 messages for step #2"), e.getMessage());
            BenchWire.expectAck(ack, 2, 99);
        } finally {
            ack.release();
        }
        RdmaMessage reject = BenchWire.reject("it serves bw");
        try {
            UserError e = assertThrows(UserError.class, () -> BenchWire.expectReady(reject, "h:1"));
            assertEquals("the listener at h:1 refused: it serves bw", e.getMessage());
        } finally {
            reject.release();
        }
    }

    @Test
    void theScheduleFollowsOsuBySizeAndTheFlagsOverrideIt() {
        OsuSchedule latency = new OsuSchedule(BenchCommand.Test.latency, null, null, OsuSchedule.defaultJitWarmup(BenchCommand.Test.latency));
        List<OsuSchedule.Step> steps = latency.steps(List.of(8, 8192, 8193, 1 << 20), true);
        assertEquals(List.of(new OsuSchedule.Step(8, 0, 10_000, false), new OsuSchedule.Step(8, 100, 10_000, true),
            new OsuSchedule.Step(8192, 100, 10_000, true), new OsuSchedule.Step(8193, 10, 1_000, true),
            new OsuSchedule.Step(1 << 20, 10, 1_000, true)), steps);
        OsuSchedule bw = new OsuSchedule(BenchCommand.Test.bw, null, null, 0);
        assertEquals(List.of(new OsuSchedule.Step(4096, 10, 100, true), new OsuSchedule.Step(65536, 2, 20, true)),
            bw.steps(List.of(4096, 65536), true), "no JIT warm-up step when it is 0");
        OsuSchedule fixed = new OsuSchedule(BenchCommand.Test.msg_rate, 7, 0, 3);
        assertEquals(List.of(new OsuSchedule.Step(8, 0, 3, false), new OsuSchedule.Step(8, 0, 7, true), new OsuSchedule.Step(1 << 20, 0, 7, true)),
            fixed.steps(List.of(8, 1 << 20), true));
        assertEquals(List.of(new OsuSchedule.Step(1 << 20, 0, 7, true)), fixed.steps(List.of(1 << 20), false),
            "the in-JVM run's later connections skip the JIT warm-up");
    }

    @Test
    void shortOsuFlagsRunAndJsonHoldsTheTable() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("bench-json");
        try {
            java.nio.file.Path lat = dir.resolve("lat.json");
            Sides.Run r = Sides.run("bench", "latency", "--sizes", "8,16k", "-i", "20", "-x", "2", "--jit-warmup", "50", "--json", lat.toString());
            assertTable(r, "# Size          Latency (us)    p50 (us)    p99 (us)", 8, 16384);
            assertTrue(r.out().contains("iterations 20 after 2 skipped, JIT warm-up 50"), r.out());
            assertEquals(2, r.out().lines().filter(l -> l.matches("\\d+ +[0-9.]+.*")).count(), "the JIT warm-up prints no row: " + r.out());
            String json = java.nio.file.Files.readString(lat);
            assertTrue(json.contains("\"test\" : \"latency\"") && json.contains("\"jitWarmup\" : 50"), json);
            assertEquals(2, json.split("\"latencyUs\"", -1).length - 1, json);
            assertTrue(json.contains("\"sizeBytes\" : 16384") && json.contains("\"iterations\" : 20") && json.contains("\"warmup\" : 2"), json);
            java.nio.file.Path rate = dir.resolve("rate.json");
            Sides.Run m = Sides.run("bench", "msg-rate", "--sizes", "8", "-i", "3", "-W", "16", "--json", rate.toString());
            assertTable(m, "# Size                  MB/s        Messages/s", 8);
            assertTrue(m.out().contains("window 16"), m.out());
            String rj = java.nio.file.Files.readString(rate);
            assertTrue(rj.contains("\"messagesPerSec\"") && rj.contains("\"window\" : 16") && rj.contains("\"warmup\" : 10"), rj);
        } finally {
            try (var files = java.nio.file.Files.list(dir)) {
                for (java.nio.file.Path f : files.toList()) {
                    java.nio.file.Files.delete(f);
                }
            }
            java.nio.file.Files.delete(dir);
        }
    }

    @Test
    void thePatternCheckFindsTheFirstWrongByte() {
        ByteBuffer b = ByteBuffer.allocateDirect(1000);
        OneSidedRegion.Pattern.fill(b, 1000);
        assertNull(OneSidedRegion.Pattern.compare(b, 1000));
        b.put(517, (byte) (b.get(517) ^ 1));
        assertTrue(OneSidedRegion.Pattern.compare(b, 1000).startsWith("byte 517 is "), OneSidedRegion.Pattern.compare(b, 1000));
        assertNull(OneSidedRegion.Pattern.compare(b, 517));
        b.put(999, (byte) (b.get(999) ^ 1));
        b.put(517, (byte) (b.get(517) ^ 1));
        assertTrue(OneSidedRegion.Pattern.compare(b, 1000).startsWith("byte 999 is "));
    }
}
