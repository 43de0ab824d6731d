package io.rdmaflux.core.tck;

import io.rdmaflux.core.ConnectRetry;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;

/**
 * The fault matrix's cells with the peer in another process ({@link FaultPeerMain}): this process is the
 * survivor, a node on the IP fabric that connects to the peer, verifies every message the peer streams
 * to it ({@link TckReceiver}: byte for byte by sequence number, PSNs in order) and, in the kill cell,
 * streams to the peer too. Used by {@link FaultMatrix} on net loopback (the peer a child JVM) and by
 * {@link NetnsFaultMatrixMain} between the namespaces of {@code scripts/netns-rails.sh} (the peer started
 * with {@code ip netns exec}, rails taken down with {@code ip link}).
 *
 * <p>Bounds: every wait is {@link #TIMEOUT} at most; a failure after a SIGKILL must come within
 * {@link #FAILURE_BOUND_MS} (the cell fails otherwise). Not thread-safe: one cell at a time, from one thread.
 */
public final class ProcessFaultCells implements AutoCloseable {
    /** How long any one wait may take. */
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** From the SIGKILL to the survivor's send and receive errors, at most, ms. */
    public static final long FAILURE_BOUND_MS = 10_000;
    /** The fault names of the two process rows. */
    public static final String KILLED = "peer process killed (SIGKILL) at a random point";
    public static final String RESTARTED = "peer process restarted on its address, a retrying connect reaches it";

    /** How to start a peer process: a command prefix (e.g. {@code ip netns exec ns}), the JVM and its class path. */
    public record Launcher(List<String> prefix, String javaBin, List<String> jvmArgs, String classPath, String listen, List<String> addresses) {
    }

    /** One row of the table, as {@link FaultMatrix} writes it. */
    public record Row(String fault, String seen, int delivered, int lost, int dup, int misordered, long ms, String note) {
    }

    /** What takes the survivor's end of a rail down or up. */
    public interface RailControl {
        void set(int rail, boolean up);
    }

    private final PairOptions options;
    private Launcher launcher;
    private final SoftProvider provider;
    private final RdmaNode node;
    private final int messages;
    private @Nullable Peer peer;
    private int connectionsServed;

    /**
     * @param options   the pair's node and spec settings (channel kind), applied to this side
     * @param addresses this side's IP per rail
     * @param messages  messages a streaming cell sends
     */
    public ProcessFaultCells(PairOptions options, List<String> addresses, Launcher launcher, int messages) {
        this.options = options;
        this.launcher = launcher;
        this.messages = messages;
        this.provider = provider(addresses, "fault-survivor");
        try {
            this.node = node(provider, options, "fault-survivor");
        } catch (RuntimeException e) {
            provider.close();
            throw e;
        }
    }

    /** The settings of both ends of every fault matrix cell (buffers, windows, message sizes). */
    public static PairOptions baseOptions(int rails) {
        return PairOptions.rails(rails).node(b -> b.bufferBytes(ConnectionTck.BUFFER_BYTES).receiveBuffers(ConnectionTck.RECEIVE_BUFFERS)
            .sendQueue(ConnectionTck.SEND_QUEUE).maxMessageBytes(ConnectionTck.MAX_MESSAGE_BYTES)
            .rendezvousBuffers(ConnectionTck.RENDEZVOUS_BUFFERS));
    }

    static SoftProvider provider(List<String> addresses, String name) {
        NetTransportConfig.Builder cfg = NetTransportConfig.builder();
        addresses.forEach(cfg::address);
        return NetProviders.builder(cfg.build()).name(name).threadingMode(ThreadingMode.INVOKER).build();
    }

    static RdmaNode node(SoftProvider p, PairOptions o, String name) {
        // (3 + 1) x 200 ms: a rail taken down is noticed within 0.8 s. At 100 ms (RealTimePair's
        // fastRailFailureDetection) a healthy rail failed once in ~16 rail rows between the namespaces at load 5.9
        // on 2 cores (no ACK for 0.4 s while two JVMs and other builds shared them), failing the connection
        RdmaNode.Builder b = RdmaNode.builder().provider(p).name(name).ports(AbstractPair.ports(o.rails()))
            .threadingMode(ThreadingMode.DEDICATED).qpRetryTimeoutNs(200_000_000).qpRetryCount(3);
        o.configureNode(b);
        return b.build();
    }

    /** Starts the peer process unless one runs. */
    public void startPeer() {
        if (peer == null || !peer.process.isAlive()) {
            peer = Peer.start(launcher, messages);
            connectionsServed = 0;
            if (launcher.listen().endsWith(":0")) {
                // a restart comes back on the port the first peer was given
                PortAddress at = PortAddress.parse(peer.address);
                launcher = new Launcher(launcher.prefix(), launcher.javaBin(), launcher.jvmArgs(), launcher.classPath(),
                    at.host() + ":" + at.port(), launcher.addresses());
            }
        }
    }

    /**
     * A launcher of the peer as a child JVM of this one on loopback (2 rails), with this JVM's class path and
     * module flags ({@code --add-opens} and the like), listening on a free port.
     */
    public static Launcher childJvm(int rails) {
        List<String> jvm = new ArrayList<>(List.of("-Xmx128m"));
        List<String> args = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.startsWith("--add-")) {
                jvm.add(a);
                if (!a.contains("=") && i + 1 < args.size()) {
                    jvm.add(args.get(++i));
                }
            }
        }
        return new Launcher(List.of(), java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java").toString(), jvm,
            System.getProperty("java.class.path"), "127.0.0.1:0", java.util.Collections.nCopies(rails, "127.0.0.1"));
    }

    // ------------------------------------------------------------------ cells

    /**
     * The peer streams {@code messages} to this side under {@code faults} (the soft NICs' fault model on
     * both ends, null: none); {@code atThird} and {@code atTwoThirds} run when a third and two thirds have
     * arrived. Completes when the peer's send ends and this side has everything or its receive ended.
     * {@code mustComplete}: the peer's send must complete (and everything arrive), else it must fail (and this
     * side's receive too; the peer then streams without end).
     */
    public Row stream(String fault, @Nullable RailFaults faults, @Nullable Runnable atThird, @Nullable Runnable atTwoThirds,
                      boolean mustComplete, String note) {
        startPeer();
        Peer p = peer;
        p.command("FAULTS " + (faults == null ? "0 0 0 0" : faults.lossRate() + " " + faults.duplicateRate() + " " + faults.reorderRate()
            + " " + faults.seed()));
        // a row that must fail streams without end, so traffic is under way when its fault strikes (else, on a
        // loaded host, the whole stream may be acknowledged before the rails go down)
        p.command("STREAM " + (mustComplete ? messages : 0));
        SoftRails.applyOne(provider, options.rails(), faults, 0);
        long start = System.nanoTime();
        RdmaConnection c = connect(options.connectionSpec());
        int conn = ++connectionsServed;
        try {
            TckReceiver r = TckReceiver.builder(SIGNALS, ConnectionTck::faultSize).demand(Demand.LIMIT_RATE).subscribe(c);
            if (atThird != null) {
                await("a third arrives", () -> r.received() >= messages / 3 || r.terminated());
                atThird.run();
            }
            if (atTwoThirds != null) {
                await("two thirds arrive", () -> r.received() >= 2 * messages / 3 || r.terminated());
                atTwoThirds.run();
            }
            String sendLine = p.awaitLine("SEND " + conn + " ");
            await("the receive ends or has everything; " + r, () -> r.received() == messages || r.terminated());
            boolean sent = sendLine.contains(" COMPLETED ");
            if (sent != mustComplete) {
                throw new AssertionError("the peer's send must " + (mustComplete ? "complete" : "fail") + ": " + sendLine + "; " + r);
            }
            if (!sent) {
                await("the receive fails too; " + r, r::terminated);
            }
            String seen = sent ? "send completes" : "send fails: " + sendLine.substring(sendLine.indexOf(" FAILED ") + 8).split(":")[0]
                + "; receive fails: " + simpleName(r.error());
            return check(fault, seen, r, sent ? messages : -1, start, note + (faults == null ? "" : "; " + faults + " on the soft NICs of both"));
        } finally {
            SoftRails.applyOne(provider, options.rails(), null, 0);
            closeQuietly(c);
        }
    }

    /**
     * The peer streams without end and this side streams to it; after a random number of messages in
     * [messages / 10, messages] (from {@code seed}) arrived, the peer gets SIGKILL. This side's receive and
     * send must both fail within {@link #FAILURE_BOUND_MS}, and what arrived be a verified prefix.
     */
    public Row killedAtRandomPoint(long seed) {
        startPeer();
        Peer p = peer;
        p.command("STREAM 0");
        int killAt = messages / 10 + new Random(seed).nextInt(messages - messages / 10 + 1);
        long start = System.nanoTime();
        RdmaConnection c = connect(options.connectionSpec());
        try {
            TckReceiver r = TckReceiver.builder(SIGNALS, ConnectionTck::faultSize).demand(Demand.LIMIT_RATE).subscribe(c);
            AtomicReference<Throwable> sendError = new AtomicReference<>();
            AtomicLong sendFailedAt = new AtomicLong();
            c.send(Flux.range(0, Integer.MAX_VALUE).map(i -> RdmaMessage.of(new byte[64]))).subscribe(null, e -> {
                sendFailedAt.compareAndSet(0, System.nanoTime());
                sendError.set(e);
            });
            await(killAt + " messages arrive; " + r, () -> r.received() >= killAt || r.terminated());
            if (r.terminated()) {
                throw new AssertionError("the receive ended before the kill: " + r);
            }
            long killedAt = System.nanoTime();
            p.kill();
            // the receive's end is seen by polling (2 ms); the send's by its own error callback
            await("the receive fails after the SIGKILL; " + r, r::terminated);
            long receiveMs = (System.nanoTime() - killedAt) / 1_000_000;
            await("the send fails after the SIGKILL", () -> sendError.get() != null);
            long sendMs = (sendFailedAt.get() - killedAt) / 1_000_000;
            if (Math.max(receiveMs, sendMs) > FAILURE_BOUND_MS) {
                throw new AssertionError("the survivor learnt of the SIGKILL only after " + Math.max(receiveMs, sendMs) + " ms (bound "
                    + FAILURE_BOUND_MS + " ms): receive " + receiveMs + " ms, send " + sendMs + " ms");
            }
            if (r.error() == null || r.completed()) {
                throw new AssertionError("the receive must fail, not complete, when the peer is killed: " + r);
            }
            String seen = "receive fails: " + simpleName(r.error()) + " after " + receiveMs + " ms; send fails: "
                + simpleName(sendError.get()) + " after " + sendMs + " ms";
            return check(KILLED, seen, r, -1, start, "killed after " + killAt + " messages arrived (seed " + seed + "); receive: "
                + r.error().getMessage() + "; send: " + sendError.get().getMessage());
        } finally {
            closeQuietly(c);
        }
    }

    /**
     * The peer killed (if it still runs: {@link #killedAtRandomPoint} did that) and a connect with
     * {@link ConnectRetry} started while nothing listens, then the peer started again on its address; the
     * connect reaches it and a full stream is verified.
     */
    public Row restarted() {
        if (peer != null && peer.process.isAlive()) {
            peer.kill();
        }
        long start = System.nanoTime();
        CompletableFuture<RdmaConnection> again = node.connect(peerAddress(), options.connectionSpec()
            .connectRetry(ConnectRetry.backoff(400, 10_000_000).maxBackoffNs(100_000_000))).toFuture();
        startPeer();
        long startedAt = System.nanoTime();
        RdmaConnection c;
        try {
            c = again.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            again.cancel(true);
            throw new AssertionError("the retrying connect did not reach the restarted peer: " + e, e);
        }
        long connectedMs = (System.nanoTime() - startedAt) / 1_000_000;
        int conn = ++connectionsServed;
        try {
            TckReceiver r = TckReceiver.builder(SIGNALS, ConnectionTck::faultSize).demand(Demand.LIMIT_RATE).subscribe(c);
            String sendLine = peer.awaitLine("SEND " + conn + " ");
            await("everything arrives from the restarted peer; " + r, () -> r.received() == messages || r.terminated());
            if (!sendLine.contains(" COMPLETED ")) {
                throw new AssertionError("the restarted peer's send failed: " + sendLine);
            }
            return check(RESTARTED, "a retrying connect reaches the new process (" + connectedMs + " ms after its start); send completes",
                r, messages, start, "ConnectRetry.backoff(400, 10 ms), max backoff 100 ms");
        } finally {
            closeQuietly(c);
        }
    }

    // ------------------------------------------------------------------ helpers

    private PortAddress peerAddress() {
        return PortAddress.parse(peer != null ? peer.address : "net://" + launcher.listen());
    }

    private RdmaConnection connect(ConnectionSpec spec) {
        RdmaConnection c = node.connect(peerAddress(), spec).block(TIMEOUT);
        if (c == null) {
            throw new AssertionError("no connection to the peer");
        }
        return c;
    }

    private static void closeQuietly(RdmaConnection c) {
        c.close();
        c.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
    }

    /** Checks the delivered prefix as {@link FaultMatrix} does; {@code expected} -1: only the prefix. */
    static Row check(String fault, String seen, TckReceiver r, int expected, long startNs, String note) {
        r.assertNoFailure();
        List<Integer> psns = r.psns();
        Set<Integer> distinct = new HashSet<>(psns);
        int dup = psns.size() - distinct.size();
        int misordered = 0;
        for (int i = 1; i < psns.size(); i++) {
            if (psns.get(i) < psns.get(i - 1)) {
                misordered++;
            }
        }
        int lost = expected >= 0 ? expected - r.received() : 0;
        if (dup != 0 || misordered != 0 || lost != 0) {
            throw new AssertionError(fault + ": " + dup + " duplicated, " + misordered + " misordered, " + lost + " lost; " + r);
        }
        for (int i = 0; i < psns.size(); i++) {
            if (psns.get(i) != i) {
                throw new AssertionError(fault + ": the delivered messages are not a PSN prefix at " + i + ": " + psns.get(i));
            }
        }
        return new Row(fault, seen, r.received(), lost, dup, misordered, (System.nanoTime() - startNs) / 1_000_000, note);
    }

    static void await(String what, BooleanSupplier done) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not reached within " + TIMEOUT.toSeconds() + " s: " + what);
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for: " + what, e);
            }
        }
    }

    static String simpleName(@Nullable Throwable t) {
        return t == null ? "-" : t.getClass().getSimpleName();
    }

    /** Stops the peer (SIGKILL) and closes this side's node and provider. */
    @Override
    public void close() {
        try {
            if (peer != null) {
                peer.kill();
            }
        } finally {
            try {
                node.close();
            } finally {
                provider.close();
            }
        }
    }

    /** A running {@link FaultPeerMain}: its stdin for commands, its stdout lines, its bound address. */
    private static final class Peer {
        private final Process process;
        private final Writer stdin;
        private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        private final List<String> seen = new ArrayList<>();
        private String address;

        private Peer(Process process) {
            this.process = process;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        }

        static Peer start(Launcher l, int messages) {
            List<String> cmd = new ArrayList<>(l.prefix());
            cmd.add(l.javaBin());
            cmd.addAll(l.jvmArgs());
            cmd.addAll(List.of("-cp", l.classPath(), FaultPeerMain.class.getName(), l.listen(), String.join(",", l.addresses()),
                Integer.toString(messages)));
            Process pr;
            try {
                pr = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start the peer process " + cmd, e);
            }
            Peer p = new Peer(pr);
            Thread reader = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(pr.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = out.readLine()) != null) {
                        p.lines.add(line);
                    }
                } catch (IOException ignored) {
                    // the peer is gone
                }
            }, "fault-peer-output");
            reader.setDaemon(true);
            reader.start();
            try {
                String l0 = p.awaitLine("LISTENING ");
                p.address = l0.substring("LISTENING ".length()).trim();
            } catch (RuntimeException | Error e) {
                pr.destroyForcibly();
                throw e;
            }
            return p;
        }

        /** The next line starting with {@code prefix}, skipping others (kept for the error message). */
        String awaitLine(String prefix) {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (true) {
                String line;
                try {
                    line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted", e);
                }
                if (line == null) {
                    throw new AssertionError("the peer process did not print '" + prefix + "...' within " + TIMEOUT.toSeconds()
                        + " s (alive: " + process.isAlive() + "); its output: " + seen);
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
                seen.add(line);
            }
        }

        void command(String line) {
            try {
                stdin.write(line + "\n");
                stdin.flush();
            } catch (IOException e) {
                throw new UncheckedIOException("the peer process does not take commands (alive: " + process.isAlive() + ")", e);
            }
            awaitLine("OK");
        }

        /** SIGKILL: no shutdown hook, no close, no ABORT frame. */
        void kill() {
            process.destroyForcibly();
            try {
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    throw new AssertionError("the peer process did not die within 30 s of SIGKILL");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            try {
                stdin.close();
            } catch (IOException ignored) {
                // the pipe is gone with the process
            }
        }
    }

    /** The TCK helpers' fixture, for their {@code signal()} only: the waits here poll. */
    private static final ConnectionTckFixture SIGNALS = new ConnectionTckFixture() {
        @Override
        public RdmaConnection client() {
            throw new UnsupportedOperationException();
        }

        @Override
        public RdmaConnection server() {
            throw new UnsupportedOperationException();
        }

        @Override
        public RdmaNode clientNode() {
            throw new UnsupportedOperationException();
        }

        @Override
        public RdmaNode serverNode() {
            throw new UnsupportedOperationException();
        }

        @Override
        public int rails() {
            throw new UnsupportedOperationException();
        }

        @Override
        public int maxFramePayloadBytes() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean virtualTime() {
            return false;
        }

        @Override
        public void await(String what, BooleanSupplier done) {
            ProcessFaultCells.await(what, done);
        }

        @Override
        public void settle() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean closed(Side side) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void signal() {
            // the waits poll
        }

        @Override
        public boolean supportsRailFailure() {
            return false;
        }

        @Override
        public void failRail(Side side, int rail) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
        }
    };
}
