package io.rdmaflux.eager;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A client node and a server node, INVOKER mode on one virtual clock, each with its own
 * {@link EagerChannelProvider}; the client opens as many connections to the server as a test asks
 * ({@link #connect}). Deterministic: the test thread drives every pass.
 */
final class EagerBed implements AutoCloseable {
    final SoftTwoNodes soft;
    final EagerChannelProvider clientEager;
    final EagerChannelProvider serverEager;
    final RdmaNode clientNode;
    final RdmaNode serverNode;
    private final RdmaServer listener;
    private final List<RdmaConnection> accepted = new ArrayList<>();

    EagerBed(RailConfig rail, EagerPolicy policy, Consumer<RdmaNode.Builder> both, Consumer<RdmaNode.Builder> serverOnly) {
        this(rail, policy, both, serverOnly, true);
    }

    /** With {@code serverOffersEager} false the server node offers RC send/receive only (no discovery either). */
    EagerBed(RailConfig rail, EagerPolicy policy, Consumer<RdmaNode.Builder> both, Consumer<RdmaNode.Builder> serverOnly,
             boolean serverOffersEager) {
        soft = SoftTwoNodes.create(1, rail);
        clientEager = new EagerChannelProvider(policy);
        serverEager = new EagerChannelProvider(policy);
        RdmaNode.Builder cb = RdmaNode.builder().provider(soft.a()).name("client").threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000).bufferBytes(1024).receiveBuffers(16).sendQueue(8)
            .channelProvider(clientEager);
        RdmaNode.Builder sb = RdmaNode.builder().provider(soft.b()).name("server").threadingMode(ThreadingMode.INVOKER)
            .clock(soft.clock()).driveProvider(false).qpRetryTimeoutNs(1_000_000).bufferBytes(1024).receiveBuffers(16).sendQueue(8);
        if (serverOffersEager) {
            sb.channelProvider(serverEager);
        } else {
            sb.discoverChannelProviders(false);
        }
        both.accept(cb);
        both.accept(sb);
        serverOnly.accept(sb);
        clientNode = cb.build();
        serverNode = sb.build();
        listener = serverNode.bind(new PortAddress("mem", soft.b().devices().get(0).name(), 0));
        listener.accept().subscribe(accepted::add);
    }

    static EagerBed open() {
        return new EagerBed(RailConfig.UNSHAPED, EagerPolicy.DEFAULTS, b -> { }, b -> { });
    }

    /** Opens one more connection; returns {client side, server side}. */
    RdmaConnection[] connect(ConnectionSpec spec) {
        int before = accepted.size();
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        clientNode.connect(listener.address(), spec).subscribe(connected::set, error::set);
        runUntil(() -> (connected.get() != null && accepted.size() > before) || error.get() != null);
        if (error.get() != null) {
            throw new AssertionError("connect failed: " + error.get(), error.get());
        }
        drive();
        return new RdmaConnection[] {connected.get(), accepted.get(accepted.size() - 1)};
    }

    /** Connect, expecting an error. */
    Throwable connectFails(ConnectionSpec spec) {
        AtomicReference<RdmaConnection> connected = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        clientNode.connect(listener.address(), spec).subscribe(connected::set, error::set);
        runUntil(() -> connected.get() != null || error.get() != null);
        if (connected.get() != null) {
            throw new AssertionError("connect succeeded but should fail");
        }
        return error.get();
    }

    int pass() {
        return soft.progress() + clientNode.invoke() + serverNode.invoke();
    }

    void runUntil(BooleanSupplier done) {
        for (int i = 0; i < 2_000_000; i++) {
            if (done.getAsBoolean()) {
                return;
            }
            if (pass() == 0) {
                soft.clock().advance(1_000);
            }
        }
        if (!done.getAsBoolean()) {
            throw new AssertionError("not reached at virtual time " + soft.clock().nanoTime() + " ns; client eager "
                + clientEager.channels() + ", server eager " + serverEager.channels());
        }
    }

    /** Passes until nothing moves for a few idle microseconds. */
    void drive() {
        int idle = 0;
        for (int i = 0; i < 2_000_000 && idle < 5; i++) {
            if (pass() == 0) {
                idle++;
                soft.clock().advance(1_000);
            } else {
                idle = 0;
            }
        }
    }

    /** Advances virtual time by {@code ns} in 1 µs steps, passing after each. */
    void advance(long ns) {
        for (long t = 0; t < ns; t += 1_000) {
            pass();
            soft.clock().advance(1_000);
        }
    }

    @Override
    public void close() {
        listener.close();
        clientNode.close();
        serverNode.close();
        drive();
        soft.close();
    }

    /** A subscriber with explicit demand that keeps what it receives until the test releases it. */
    static final class Holder extends BaseSubscriber<RdmaMessage> {
        final List<RdmaMessage> held = new ArrayList<>();
        final List<Integer> seqs = new ArrayList<>();
        final List<String> mismatches = new ArrayList<>();
        final int lengthBytes;
        final boolean releaseAtOnce;
        volatile Throwable error;

        Holder(int lengthBytes, boolean releaseAtOnce) {
            this.lengthBytes = lengthBytes;
            this.releaseAtOnce = releaseAtOnce;
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
        }

        @Override
        protected void hookOnNext(RdmaMessage m) {
            int seq = m.lengthBytes() >= 4 ? ByteSeq.seqOf(m) : seqs.size();
            seqs.add(seq);
            String bad = io.rdmaflux.core.tck.TckPayload.mismatch(m, seq, lengthBytes);
            if (bad != null) {
                mismatches.add(bad);
            }
            if (releaseAtOnce) {
                m.release();
            } else {
                held.add(m);
            }
        }

        @Override
        protected void hookOnError(Throwable t) {
            error = t;
        }

        void releaseAll() {
            held.forEach(RdmaMessage::release);
            held.clear();
        }
    }

    /** The sequence number in the first four bytes of a TCK payload. */
    static final class ByteSeq {
        private ByteSeq() {
        }

        static int seqOf(RdmaMessage m) {
            byte[] b = m.toByteArray();
            return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
        }
    }
}
