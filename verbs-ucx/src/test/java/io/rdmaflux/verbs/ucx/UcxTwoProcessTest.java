package io.rdmaflux.verbs.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ucx provider between two processes: a child JVM ({@link UcxEchoPeer}) listens with
 * {@code cm=tcp}; this JVM connects through the TCP connection manager, learns the child's UCX worker
 * address from the exchange, and sends 64 B, 4 KiB and 256 KiB messages, then windows of 32 messages of
 * 64 KiB back to back (48 MiB in all), over UCX {@code tcp}, which the child echoes back byte-exact.
 * Skipped without UCX.
 */
class UcxTwoProcessTest {
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);

    @TempDir
    Path dir;

    @Test
    void messagesCrossBetweenTwoProcessesOverUcxTcp() throws Exception {
        UcxTestSupport.assumeUcx();
        VerbsLeakCheck leaks = VerbsLeakCheck.begin();
        Path out = dir.resolve("child.out");
        Path err = dir.resolve("child.err");
        Process child = startChild(out, err);
        try {
            int port = awaitListening(child, out, err);
            try (UcxProvider p = UcxProvider.builder().name("echo-parent").tls("tcp").cm(UcxProvider.Cm.TCP)
                    .threadingMode(ThreadingMode.INVOKER).build();
                 EchoQp e = new EchoQp(p.devices().get(0))) {
                CompletableFuture<CmParams> reply = p.connectionManager().connect(new PortAddress("ucx", "127.0.0.1", port),
                    new CmParams(List.of(e.qp.localEndpoint()), new byte[0]), 20_000_000_000L);
                long deadline = System.nanoTime() + DEADLINE_NS;
                while (!reply.isDone()) {
                    p.progress(System.nanoTime());
                    assertTrue(System.nanoTime() - deadline < 0, "no CM reply from the child");
                }
                CmParams r = reply.join();
                assertEquals(2, p.knownDevices(), "the child's device is learned from the exchange");
                e.qp.connect(r.endpoints().get(0));
                int n = 0;
                for (int size : EchoQp.SIZES) {
                    echo(p, e, List.of(n++), size, deadline, out, err);
                }
                for (int burst = 0; burst < EchoQp.BURSTS; burst++) {
                    List<Integer> window = new ArrayList<>();
                    for (int slot = 0; slot < EchoQp.SLOTS; slot++) {
                        window.add(n++);
                    }
                    echo(p, e, window, EchoQp.BURST_BYTES, deadline, out, err);
                }
                long[] frames = p.frameCounts(0);
                assertTrue(frames[0] > 0 && frames[1] > 0, "frames crossed UCX: " + frames[0] + " sent, " + frames[1] + " received");
            }
            assertTrue(child.waitFor(60, TimeUnit.SECONDS), "the child did not exit" + childOutput(out, err));
            assertEquals(0, child.exitValue(), () -> "child exit code" + childOutput(out, err));
        } finally {
            child.destroyForcibly();
            child.waitFor(10, TimeUnit.SECONDS);
        }
        leaks.assertClean();
    }

    /**
     * Sends messages {@code ns} ({@code size} bytes each, message {@code ns.get(i)} from slot {@code i})
     * back to back, and checks each echo byte-exact.
     */
    private static void echo(UcxProvider p, EchoQp e, List<Integer> ns, int size, long deadline, Path out, Path err) {
        List<byte[]> sent = new ArrayList<>();
        for (int slot = 0; slot < ns.size(); slot++) {
            byte[] msg = EchoQp.pattern(ns.get(slot), size);
            sent.add(msg);
            e.send.buffer().put(slot * EchoQp.MAX, msg);
            e.postReceive(slot);
        }
        for (int slot = 0; slot < ns.size(); slot++) {
            e.postSend(slot, size);
        }
        List<WorkCompletion> received = new ArrayList<>();
        int completions = 0;
        while (completions < 2 * ns.size()) {
            p.progress(System.nanoTime());
            List<WorkCompletion> wcs;
            try {
                wcs = e.poll();
            } catch (IllegalStateException failed) {
                throw new AssertionError(failed.getMessage() + childOutput(out, err), failed);
            }
            for (WorkCompletion wc : wcs) {
                completions++;
                if (EchoQp.isReceive(wc)) {
                    received.add(wc);
                }
            }
            int got = completions;
            assertTrue(System.nanoTime() - deadline < 0, () -> "echoes of messages " + ns + " incomplete: " + got + " completions"
                + childOutput(out, err));
        }
        for (WorkCompletion wc : received) {
            int slot = (int) wc.wrId();
            assertEquals(size, wc.byteLength());
            byte[] echo = new byte[size];
            e.receive.buffer().get(slot * EchoQp.MAX, echo);
            assertArrayEquals(sent.get(slot), echo, () -> "echo of message " + ns.get(slot) + " (" + size + " B)");
        }
    }

    private static Process startChild(Path out, Path err) throws java.io.IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!a.startsWith("-javaagent") && !a.startsWith("-agentlib") && !a.startsWith("-Xrunjdwp")) {
                cmd.add(a);
            }
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(UcxEchoPeer.class.getName());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().put("UCX_LOG_LEVEL", "error");
        return pb.start();
    }

    private static int awaitListening(Process child, Path out, Path err) throws Exception {
        Pattern listening = Pattern.compile("listening at 127\\.0\\.0\\.1:(\\d+)");
        long deadline = System.nanoTime() + DEADLINE_NS;
        while (System.nanoTime() - deadline < 0) {
            Matcher m = listening.matcher(Files.readString(out, StandardCharsets.UTF_8));
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            if (child.waitFor(20, TimeUnit.MILLISECONDS)) {
                throw new AssertionError("the child exited (" + child.exitValue() + ") before listening" + childOutput(out, err));
            }
        }
        throw new AssertionError("the child did not listen within 60 s" + childOutput(out, err));
    }

    private static String childOutput(Path out, Path err) {
        try {
            return "\nchild stdout:\n" + Files.readString(out) + "\nchild stderr:\n" + Files.readString(err);
        } catch (java.io.IOException e) {
            return "\n(child output unreadable: " + e + ")";
        }
    }
}
