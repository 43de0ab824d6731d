package io.rdmaflux.core.tck;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;
import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.reactivestreams.tck.TestEnvironment;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Two DEDICATED-mode nodes for the Reactive Streams TCK, which runs on real threads and timeouts.
 * Each TCK publisher/subscriber gets its own <em>connection</em> ({@link #open()}); the nodes are
 * shared by every rule of a test class. The providers run in INVOKER mode, driven by their nodes'
 * threads, so the whole fixture is two threads however many connections a rule opens.
 *
 * <p>Why shared nodes: rule 1.03 (stochastic) creates 100 publishers in one rule. With a node pair
 * (and two DEDICATED providers) per publisher, 400 busy-polling threads were alive at once on 2
 * cores; each thread got the CPU so rarely that RC acknowledgements outlived the QP retry timeout
 * and runs stalled about 30 pairs in. Connections are what the TCK exercises; nodes are the
 * process-wide resource an application also creates once.
 */
final class TckNodes implements AutoCloseable {
    private static int ids;
    private final SoftProvider pa;
    private final SoftProvider pb;
    private final RdmaNode a;
    private final RdmaNode b;
    private final RdmaServer listener;
    private final LinkedBlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
    private final List<RdmaConnection> open = new ArrayList<>();

    /** A client and its accepted server side. */
    static final class Pair {
        final RdmaConnection client;
        final RdmaConnection server;

        Pair(RdmaConnection client, RdmaConnection server) {
            this.client = client;
            this.server = server;
        }
    }

    TckNodes() {
        int id;
        synchronized (TckNodes.class) {
            id = ++ids;
        }
        SoftFabric fabric = SoftFabric.mem("tck-" + id);
        pa = SoftProvider.builder().name("tcka" + id).fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        pb = SoftProvider.builder().name("tckb" + id).fabric(fabric).threadingMode(ThreadingMode.INVOKER).build();
        a = RdmaNode.builder().provider(pa).name("tcka" + id).receiveBuffers(64).bufferBytes(256).build();
        b = RdmaNode.builder().provider(pb).name("tckb" + id).receiveBuffers(64).bufferBytes(256).build();
        listener = b.bind(new PortAddress("mem", pb.devices().get(0).name(), 0));
        listener.accept().subscribe(accepted::add);
    }

    /**
     * The TCK environment for rules run on these nodes: up to 10 s for each signal a rule expects (it
     * crosses both progress threads, which a loaded 2-core machine can keep off the CPU for a good part
     * of the 2 s used before), 500 ms where a rule checks that nothing more arrives (a short wait there
     * can miss a late signal but never fails a correct publisher or subscriber), and a look for an
     * expected error every 10 ms (the TCK's two-argument constructor polls at the full 10 s, so each
     * rule that expects an error would sleep that long however early the error came).
     */
    static TestEnvironment environment() {
        return new TestEnvironment(10_000, 500, 10);
    }

    /** Opens a new connection between the two nodes. */
    Pair open() {
        RdmaConnection client = a.connect(listener.address(), ConnectionSpec.defaults()).block(Duration.ofSeconds(10));
        RdmaConnection server;
        try {
            server = accepted.poll(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        if (client == null || server == null) {
            throw new IllegalStateException("connecting the TCK nodes timed out");
        }
        synchronized (open) {
            open.add(client);
            open.add(server);
        }
        return new Pair(client, server);
    }

    /**
     * Aborts the connections opened since the last call (between rules) and waits until each has
     * terminated: its subscribers are signaled on the progress thread before {@code onClose()}
     * completes, so no error from this rule's connections reaches the next rule's TCK environment
     * after that rule cleared its async errors.
     */
    void abortConnections() {
        List<RdmaConnection> aborted;
        synchronized (open) {
            aborted = List.copyOf(open);
            open.clear();
        }
        aborted.forEach(RdmaConnection::abort);
        for (RdmaConnection c : aborted) {
            c.onClose().onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(Duration.ofSeconds(10));
        }
    }

    @Override
    public void close() {
        abortConnections();
        a.close();
        b.close();
        pa.close();
        pb.close();
    }
}
