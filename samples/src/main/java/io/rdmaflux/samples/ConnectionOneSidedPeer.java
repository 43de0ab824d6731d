package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;

/**
 * The one-sided benchmarks ({@code put-bw}, {@code get-bw}, {@code put-latency}, {@code get-latency}) between
 * two processes through the connection's one-sided API (seed 002: {@code RdmaConnection.expose},
 * {@code remoteRegions}, {@code put}/{@code get}/{@code fence}), as {@link ConnectionOneSidedBench} runs them in
 * one JVM: the listener only exposes memory and checks it afterwards; the connector measures and prints.
 * The control messages travel over the same connection, big-endian:
 *
 * <pre>
 * connector -> listener, first: HELLO   | magic 'RCH1' (4) | put (1) | region bytes (4) | test name UTF-8 |
 * listener: registers a region of that size (a get's holds the pattern), exposes it READ_WRITE (the connector's
 *           remoteRegions() delivers it; the keys per rail travel in the connection's EXPOSE frame)
 *   or answers REJECT | magic 'RCX1' (4) | reason UTF-8 |
 * connector -> listener, last:  DONE    | magic 'RCD1' (4) | extent bytes (8) |
 * listener -> connector:        VERDICT | magic 'RCV1' (4) | ok (1) | mismatch UTF-8 (when not ok) |
 * </pre>
 * A put run is verified at the target, by the listener, over the extent the timed puts wrote; a get run at
 * the connector, over what it read. Both sides must run the same test (the listener refuses another and exits,
 * as the two-sided listener does); the listener's region is the size the connector's sizes and window need.
 */
final class ConnectionOneSidedPeer {
    static final int HELLO = 0x52434831;
    static final int REJECT = 0x52435831;
    static final int DONE = 0x52434431;
    static final int VERDICT = 0x52435631;
    /** The largest region a listener registers for a peer, bytes: twice what any valid run asks (64 MiB, or one 64 MiB size). */
    static final int MAX_REGION_BYTES = 128 << 20;

    private ConnectionOneSidedPeer() {
    }

    /** The listening side: serves one run, then exits; 3 if the peer's puts did not arrive intact. */
    static int serve(BenchCommand.Settings s, NetRails.HostPort at, PrintWriter out) {
        long deadlineNs = System.nanoTime() + s.peer().timeout().toNanos();
        String name = BenchCommand.name(s.test());
        try (NetRails link = NetRails.listen(ConnectionOneSidedBench.netSettings(s), at, s.peer().timeout(), bound -> {
            out.println("rdmaflux bench " + name + ": listening at " + bound + " (rails on " + String.join(",", s.addresses())
                + "); serving one run for a peer (bench " + name + " --connect " + bound + "), up to " + s.peer().timeout().toSeconds() + " s");
            out.flush();
        })) {
            RdmaConnection c = link.connection();
            // receive() takes one subscriber for the connection's life: the control messages queue here
            java.util.concurrent.LinkedBlockingQueue<ByteBuffer> inbox = new java.util.concurrent.LinkedBlockingQueue<>();
            c.receive().map(ConnectionOneSidedPeer::copy).subscribe(inbox::add, e -> { }, () -> { });
            ByteBuffer hello = receive(inbox, deadlineNs, "the peer's HELLO");
            String problem = hello.remaining() < 9 || hello.getInt() != HELLO ? "the peer sent something other than a one-sided bench HELLO "
                + "(is it running a two-sided test, or another version?)" : null;
            boolean put = ConnectionOneSidedBench.isPut(s.test());
            int regionBytes = 0;
            if (problem == null) {
                hello.get(); // the connector's put flag: its test name says the same
                regionBytes = hello.getInt();
            }
            String asked = problem == null ? StandardCharsets.UTF_8.decode(hello).toString() : "";
            if (problem == null && !asked.equals(name)) {
                problem = "it serves " + name + " but the client asked for " + asked + "; run the same test on both sides";
            } else if (problem == null && (regionBytes < 1 || regionBytes > MAX_REGION_BYTES)) {
                problem = "the peer asked for a " + regionBytes + "-byte region; this listener registers 1.." + MAX_REGION_BYTES + " bytes";
            }
            if (problem != null) {
                byte[] reason = problem.getBytes(StandardCharsets.UTF_8);
                Deadlines.block(c.send(reactor.core.publisher.Mono.fromSupplier(() -> message(REJECT, reason))),
                    deadlineNs, "sending the refusal");
                link.closeGracefully(Duration.ofSeconds(5));
                throw new UserError("refused the peer: " + problem);
            }
            MemoryRegion target = link.node().registerMemory(ByteBuffer.allocateDirect(regionBytes));
            if (!put) {
                OneSidedRegion.Pattern.fill(target.buffer(), regionBytes);
            }
            Deadlines.block(c.expose(target, RemoteAccess.READ_WRITE).then(), deadlineNs, "exposing the region");
            ByteBuffer done = receive(inbox, deadlineNs, "the peer's run");
            if (done.remaining() != 12 || done.getInt() != DONE) {
                throw new UserError("the peer ended its run with something other than DONE");
            }
            long extent = done.getLong();
            String mismatch = put ? extent < 0 || extent > regionBytes ? "the peer reported an extent of " + extent + " bytes in a "
                + regionBytes + "-byte region" : OneSidedRegion.Pattern.compare(target.buffer(), extent) : null;
            byte[] why = mismatch == null ? new byte[0] : mismatch.getBytes(StandardCharsets.UTF_8);
            ByteBuffer v = ByteBuffer.allocate(1 + why.length).put((byte) (mismatch == null ? 1 : 0)).put(why);
            Deadlines.block(c.send(reactor.core.publisher.Mono.fromSupplier(() -> message(VERDICT, v.array()))), deadlineNs, "sending the verdict");
            out.printf(Locale.ROOT, "rdmaflux bench %s: served a %d-byte region over %s to a peer's %s run; %s%n", name, regionBytes,
                link.describe(), put ? "put" : "get", put ? (mismatch == null ? "the " + extent + " bytes put into it match the pattern"
                    : "VERIFICATION FAILED: " + mismatch) : "the peer checks what it read");
            out.flush();
            link.closeGracefully(Duration.ofSeconds(10));
            return mismatch == null ? 0 : 3;
        }
    }

    /** The connecting side: measures every size against the listener and prints the table; 3 on a mismatch. */
    static int runAgainst(BenchCommand.Settings s, NetRails.HostPort to, PrintWriter out, int regionBytes, int window, boolean latency) {
        long deadlineNs = System.nanoTime() + s.peer().timeout().toNanos();
        boolean put = ConnectionOneSidedBench.isPut(s.test());
        try (NetRails link = NetRails.connect(ConnectionOneSidedBench.netSettings(s), to,
            Duration.ofSeconds(Math.min(30, s.peer().timeout().toSeconds())), "rdmaflux bench " + BenchCommand.name(s.test()))) {
            RdmaConnection c = link.connection();
            try {
                MemoryRegion local = link.node().registerMemory(ByteBuffer.allocateDirect(regionBytes));
                if (put) {
                    OneSidedRegion.Pattern.fill(local.buffer(), regionBytes);
                }
                // subscribe before asking, so the listener's EXPOSE cannot arrive unobserved
                var firstRegion = c.remoteRegions().next().toFuture();
                var firstMessage = c.receive().next().map(ConnectionOneSidedPeer::copy).toFuture();
                byte[] test = BenchCommand.name(s.test()).getBytes(StandardCharsets.UTF_8);
                ByteBuffer hello = ByteBuffer.allocate(5 + test.length).put((byte) (put ? 1 : 0)).putInt(regionBytes).put(test);
                Deadlines.block(c.send(reactor.core.publisher.Mono.fromSupplier(() -> message(HELLO, hello.array()))), deadlineNs, "sending HELLO");
                RemoteRegion remote = awaitRegion(firstRegion, firstMessage, deadlineNs, to);
                if (remote.lengthBytes() < regionBytes) {
                    throw new UserError("the listener at " + to + " exposed " + remote.lengthBytes() + " bytes but this run needs " + regionBytes);
                }
                long extent = ConnectionOneSidedBench.measure(s, out, c, local, remote, regionBytes, window, latency, ", peer " + to);
                ByteBuffer done = ByteBuffer.allocate(8).putLong(extent);
                Deadlines.block(c.send(reactor.core.publisher.Mono.fromSupplier(() -> message(DONE, done.array()))), deadlineNs, "sending DONE");
                ByteBuffer verdict = Deadlines.await(firstMessage, deadlineNs, "the listener's verdict");
                if (verdict.remaining() < 5 || verdict.getInt() != VERDICT) {
                    throw new UserError("the listener at " + to + " answered DONE with something other than a verdict");
                }
                boolean ok = verdict.get() != 0;
                String mismatch = put ? ok ? null : "at the target: " + StandardCharsets.UTF_8.decode(verdict)
                    : OneSidedRegion.Pattern.compare(local.buffer(), extent);
                int code = ConnectionOneSidedBench.verdict(out, put, mismatch, extent);
                link.closeGracefully(Duration.ofSeconds(10));
                return code;
            } catch (RuntimeException e) {
                link.closeGracefully(Duration.ofSeconds(5));
                throw e;
            }
        }
    }

    /** The exposed region, or the listener's REJECT as a {@link UserError}. */
    private static RemoteRegion awaitRegion(java.util.concurrent.CompletableFuture<RemoteRegion> region,
                                            java.util.concurrent.CompletableFuture<ByteBuffer> message, long deadlineNs, NetRails.HostPort to) {
        java.util.concurrent.CompletableFuture.anyOf(region, message).orTimeout(Math.max(1, deadlineNs - System.nanoTime()),
            java.util.concurrent.TimeUnit.NANOSECONDS).exceptionally(e -> null).join();
        boolean noRegion = !region.isDone() || region.isCompletedExceptionally() || region.join() == null;
        if (noRegion && region.isDone()) {
            // the connection ended without an EXPOSE (a refusing listener closes it right after its answer): the
            // answer may still be on its way to the receive side
            message.orTimeout(Math.max(1, deadlineNs - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS)
                .exceptionally(e -> null).join();
        }
        if (noRegion && message.isDone() && !message.isCompletedExceptionally() && message.join() != null) {
            ByteBuffer m = message.join().duplicate();
            if (m.remaining() >= 4 && m.getInt() == REJECT) {
                throw new UserError("the listener at " + to + " refused: " + StandardCharsets.UTF_8.decode(m));
            }
            throw new UserError("the listener at " + to + " answered HELLO with something other than a region or a refusal");
        }
        RemoteRegion r = Deadlines.await(region, deadlineNs, "the listener's exposed region");
        if (r == null) {
            throw new UserError("the listener at " + to + " closed the connection without exposing a region or answering");
        }
        return r;
    }

    private static ByteBuffer receive(java.util.concurrent.BlockingQueue<ByteBuffer> inbox, long deadlineNs, String what) {
        try {
            ByteBuffer b = inbox.poll(Math.max(1, deadlineNs - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
            if (b == null) {
                throw new UserError("timed out waiting for " + what + " (--timeout-s)");
            }
            return b;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserError("interrupted waiting for " + what);
        }
    }

    private static ByteBuffer copy(RdmaMessage m) {
        try {
            DirectBuffer content = m.content();
            byte[] bytes = new byte[m.lengthBytes()];
            content.getBytes(0, bytes);
            return ByteBuffer.wrap(bytes);
        } finally {
            m.release();
        }
    }

    private static RdmaMessage message(int magic, byte @Nullable [] body) {
        byte[] b = body == null ? new byte[0] : body;
        return RdmaMessage.of(ByteBuffer.allocate(4 + b.length).putInt(magic).put(b).array());
    }
}
