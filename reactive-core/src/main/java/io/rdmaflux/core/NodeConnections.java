package io.rdmaflux.core;

import io.rdmaflux.core.channel.SubchannelSnapshot;
import io.rdmaflux.core.engine.ProgressEngine;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The registry of a node's connections: those not yet freed (open, closing, or closed with received messages
 * still held), their place in the node's {@link ProgressEngine} from opening until their rails are freed, and the
 * {@link ConnectionListener}s told once when each opens and once when it is freed. The node's
 * {@link RdmaNode#connections()}, {@link RdmaNode#addConnectionListener}, {@link RdmaNode#metrics()} and the
 * connection half of its close read it.
 *
 * <p><b>Concurrency:</b> thread-safe. A connection opens on the thread that established it and is freed on the
 * thread that released its last message or closed the node; its listeners are called on that thread, and what
 * they throw goes to Reactor's {@code onErrorDropped} hook (the other listeners are still called).
 */
final class NodeConnections {
    private final ProgressEngine engine;
    private final Set<DefaultRdmaConnection> connections = ConcurrentHashMap.newKeySet();
    private final CopyOnWriteArrayList<ConnectionListener> listeners = new CopyOnWriteArrayList<>();
    private final AtomicLong ids = new AtomicLong();

    NodeConnections(ProgressEngine engine) {
        this.engine = engine;
    }

    /** The number of the node's next connection (1, 2, ...), for its name. */
    long nextId() {
        return ids.incrementAndGet();
    }

    /** Lists {@code c}, schedules it on the engine and tells the listeners it opened. */
    void opened(DefaultRdmaConnection c) {
        connections.add(c);
        c.scheduledAs(engine.add(c));
        tell(l -> l.connectionOpened(c));
    }

    /** The connection's QPs, CQs and rail buffers are freed: nothing is left for the progress thread to do. */
    void railsFreed(DefaultRdmaConnection c) {
        engine.remove(c);
    }

    /** The connection is freed and every message it delivered released: forgets it and tells the listeners, once. */
    void freed(DefaultRdmaConnection c) {
        boolean listed = connections.remove(c);
        engine.remove(c);
        if (listed) {
            fireFreed(c);
        }
    }

    boolean contains(DefaultRdmaConnection c) {
        return connections.contains(c);
    }

    /** The connections not yet freed, in no particular order; a new list per call. */
    List<DefaultRdmaConnection> snapshot() {
        return List.copyOf(connections);
    }

    /** {@link RdmaNode#addConnectionListener}. */
    Disposable addListener(ConnectionListener listener) {
        Objects.requireNonNull(listener, "listener");
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** {@link RdmaNode#metrics()}: the connections not yet freed and the received messages they hold. */
    RdmaNode.NodeMetrics metrics() {
        int held = 0;
        for (DefaultRdmaConnection c : connections) {
            held += c.diagnostics().buffersOutstanding();
        }
        return new RdmaNode.NodeMetrics(connections.size(), held);
    }

    /**
     * The node is closing and its engine stopped: frees every connection at once (received messages still held
     * included), tells the listeners each is freed and forgets them all.
     *
     * @return one leak per connection that held received messages
     */
    List<RdmaLeakReporter.Leak> forceCloseAll() {
        List<RdmaLeakReporter.Leak> leaks = new ArrayList<>();
        for (DefaultRdmaConnection c : List.copyOf(connections)) {
            RdmaLeakReporter.Leak leak = c.termination().forceClose();
            if (leak != null) {
                leaks.add(leak);
            }
        }
        for (DefaultRdmaConnection c : List.copyOf(connections)) {
            if (connections.remove(c)) {
                fireFreed(c);
            }
        }
        connections.clear();
        return leaks;
    }

    /** Tells the listeners that {@code c} is freed, once: the caller took it out of {@link #connections}. */
    private void fireFreed(DefaultRdmaConnection c) {
        if (listeners.isEmpty()) {
            return;
        }
        ConnectionMetrics last = c.metrics();
        List<SubchannelSnapshot> rails = c.subchannels();
        tell(l -> l.connectionFreed(c, last, rails));
    }

    private void tell(Consumer<ConnectionListener> event) {
        for (ConnectionListener l : listeners) {
            try {
                event.accept(l);
            } catch (Throwable t) {
                Exceptions.throwIfJvmFatal(t);
                Operators.onErrorDropped(t, Context.empty());
            }
        }
    }
}
