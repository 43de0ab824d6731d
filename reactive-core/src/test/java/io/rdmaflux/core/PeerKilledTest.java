package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server is another process, killed with SIGKILL mid-stream and started again on the same port: the
 * client's send fails with a transport error within a bound (the kernel resets the dead process's TCP
 * streams), and a connect with {@link ConnectRetry}, started while nothing listens, reaches the new
 * process. Real processes, real time, IP fabric on loopback.
 */
class PeerKilledTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** From SIGKILL to the client's send error: the stream reset is immediate; the bound allows a loaded host. */
    private static final long FAILURE_BOUND_MS = 10_000;

    /** Starts {@link ChildServerMain} on {@code port} and returns it once it printed its address. */
    private static Child startChild(int port) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx128m"));
        // the module flags this JVM runs with (Agrona's and Chronicle's access to JDK internals)
        List<String> jvm = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (int i = 0; i < jvm.size(); i++) {
            String a = jvm.get(i);
            if (a.startsWith("--add-")) {
                cmd.add(a);
                if (!a.contains("=") && i + 1 < jvm.size()) {
                    cmd.add(jvm.get(++i));
                }
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ChildServerMain.class.getName(), Integer.toString(port)));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith("LISTENING ")) {
                // keep the pipe drained so the child never blocks on its output; the thread ends with the process
                Thread drain = new Thread(() -> {
                    try {
                        while (out.readLine() != null) {
                            // discarded
                        }
                    } catch (IOException ignored) {
                        // the child is gone
                    }
                }, "child-output-drain");
                drain.setDaemon(true);
                drain.start();
                return new Child(p, PortAddress.parse(line.substring("LISTENING ".length()).trim()));
            }
            seen.add(line);
        }
        p.destroyForcibly();
        throw new AssertionError("the child server ended without listening: " + seen);
    }

    private record Child(Process process, PortAddress address) {
        void kill() throws InterruptedException {
            process.destroyForcibly();  // SIGKILL on Linux: no shutdown hook, no close, no ABORT frame
            assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the child died");
        }
    }

    @Test
    void aServerProcessKilledMidStreamFailsTheSendWithinABoundAndItsRestartIsReachedByARetryingConnect() throws Exception {
        SoftProvider provider = NetProviders.builder(NetTransportConfig.loopback()).name("killed-client")
            .threadingMode(ThreadingMode.INVOKER).build();
        RdmaNode client = RdmaNode.builder().provider(provider).name("killed-client").build();
        Child first = null;
        Child second = null;
        try {
            first = startChild(0);
            RdmaConnection c = client.connect(first.address(), ConnectionSpec.defaults()).block(WAIT);
            assertNotNull(c);
            c.receive().subscribe(RdmaMessage::release, e -> { });
            AtomicLong taken = new AtomicLong();
            CompletableFuture<Void> sent = c.send(Flux.range(0, Integer.MAX_VALUE)
                .doOnNext(i -> taken.incrementAndGet()).map(i -> RdmaMessage.of(new byte[64]))).toFuture();
            Mono.fromCallable(() -> taken.get() >= 1_000 ? true : null).repeatWhenEmpty(r -> r.delayElements(Duration.ofMillis(5)))
                .block(WAIT);
            assertFalse(sent.isDone(), "still streaming");
            long killedAt = System.nanoTime();
            first.kill();
            Throwable error = Mono.fromFuture(sent).then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(WAIT);
            long failedAfterMs = (System.nanoTime() - killedAt) / 1_000_000;
            RdmaTransportException e = assertInstanceOf(RdmaTransportException.class, error);
            assertTrue(failedAfterMs < FAILURE_BOUND_MS, "failed " + failedAfterMs + " ms after the kill");
            assertTrue(e.getMessage().contains("stream") || e.getMessage().contains("retr"), e.getMessage());
            assertTrue(c.isDisposed());

            // a retrying connect while nothing listens, then the server process starts again on the same port
            CompletableFuture<RdmaConnection> again = client.connect(first.address(), ConnectionSpec.defaults()
                .connectRetry(ConnectRetry.backoff(400, 10_000_000).maxBackoffNs(100_000_000))).toFuture();
            second = startChild(first.address().port());
            RdmaConnection fresh = Mono.fromFuture(again).block(WAIT);
            assertNotNull(fresh);
            fresh.receive().subscribe(RdmaMessage::release, x -> { });
            fresh.send(Flux.range(0, 100).map(i -> RdmaMessage.of(new byte[64]))).block(WAIT);
            fresh.close();
            fresh.onClose().onErrorResume(x -> Mono.empty()).block(WAIT);
        } finally {
            if (first != null) {
                first.process().destroyForcibly();
            }
            if (second != null) {
                second.kill();
            }
            client.close();
            provider.close();
        }
    }
}
