package io.rdmaflux.benchmarks.net;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.soft.net.NetProviders;
import io.rdmaflux.verbs.soft.net.NetTransportConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * Two soft providers on the IP fabric over loopback for the net benchmarks: {@code a} in INVOKER
 * mode, driven by the benchmark thread (as the raw NIO reference's writer is), and {@code b} either
 * DEDICATED with its engine thread on the default backoff idle strategy (the reference's reader
 * thread blocks in {@code read}; a thread spinning on a core the other side needs would only
 * measure CPU contention) or INVOKER, driven by an echo thread. Each host has one PD and one CQ.
 * Throughput benchmarks wait for completions with {@link #awaitOneCompletion}, which backs off
 * (spin, yield, park) while nothing happens, as the blocking reference does.
 */
final class NetBench implements AutoCloseable {
    /** TCP does not lose frames: a long transport timeout avoids needless go-back-N retransmission. */
    static final long RETRY_TIMEOUT_NS = 5_000_000_000L;

    final SoftProvider a;
    final SoftProvider b;
    final ProtectionDomain pa;
    final ProtectionDomain pb;
    final CompletionQueue ca;
    final CompletionQueue cb;

    NetBench(ThreadingMode modeOfB) {
        a = NetProviders.builder(NetTransportConfig.loopback()).name("bench-a").threadingMode(ThreadingMode.INVOKER).build();
        b = NetProviders.builder(NetTransportConfig.loopback()).name("bench-b").threadingMode(modeOfB).build();
        pa = a.devices().get(0).allocateProtectionDomain();
        pb = b.devices().get(0).allocateProtectionDomain();
        ca = a.devices().get(0).createCompletionQueue(8192);
        cb = b.devices().get(0).createCompletionQueue(8192);
    }

    QpInitAttributes.Builder attrs(QpType type, boolean onA) {
        SoftProvider p = onA ? a : b;
        return QpInitAttributes.builder(type, p.devices().get(0).port(1)).cq(onA ? ca : cb)
            .maxSendWr(1024).maxReceiveWr(1024).retryTimeoutNs(RETRY_TIMEOUT_NS);
    }

    /** A connected RC pair: [0] on a, [1] on b. */
    QueuePair[] rcPair() {
        QueuePair qa = pa.createQueuePair(attrs(QpType.RC, true).build());
        QueuePair qb = pb.createQueuePair(attrs(QpType.RC, false).build());
        qa.connect(qb.localEndpoint());
        qb.connect(qa.localEndpoint());
        return new QueuePair[] {qa, qb};
    }

    private final IdleStrategy idle = new BackoffIdleStrategy(64, 64, 1_000, 100_000);
    private int completions;

    /** Drives a until one completion arrives on its CQ (failing on an error completion). */
    int awaitOneCompletion() {
        completions = 0;
        idle.reset();
        while (completions == 0) {
            int work = progressA();
            work += ca.poll(16, wc -> {
                if (!wc.isSuccess()) {
                    throw new IllegalStateException(wc.toString());
                }
                completions++;
            });
            idle.idle(work);
        }
        return completions;
    }

    /** One progress pass of a (INVOKER). */
    int progressA() {
        return a.progress(a.clock().nanoTime());
    }

    @Override
    public void close() {
        a.close();
        b.close();
    }

    /** A connected pair of loopback TCP sockets, [0] client, [1] server side; blocking, TCP_NODELAY. */
    static SocketChannel[] tcpPair() {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            client.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            accepted.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            return new SocketChannel[] {client, accepted};
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
