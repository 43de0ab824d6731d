package io.rdmaflux.core.internal.cq;

import io.rdmaflux.core.RdmaException;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.WorkCompletion;
import org.agrona.collections.Int2ObjectHashMap;
import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * One completion queue per device shared by every queue pair of a node's connections, on every rail of
 * the device (seed 000 &sect;5.1: one CQ polled in turn by the progress engine instead of one per
 * connection and rail), each completion handed to the sink registered for its queue pair number
 * ({@link WorkCompletion#qpNumber()}).
 *
 * <p><b>Sizing, no overrun by construction:</b> the CQ holds {@code maxQueuePairs x entriesPerQp}
 * completions, where {@code entriesPerQp} is what one queue pair can have outstanding (its send queue,
 * its receive buffers, the node's headroom); {@link #register} refuses a queue pair beyond
 * {@code maxQueuePairs} with an error naming the limit and the builder option that raises it. So the
 * completions waiting in the CQ never exceed its capacity.
 *
 * <p><b>After a queue pair closes</b> its completions still in the CQ go to the sink given to
 * {@link #unregister} (a shared-receive-queue channel reposts the buffers there), until one pass found
 * the CQ empty after the QP was destroyed; then the entry is dropped.
 *
 * <p><b>Concurrency:</b> {@link #register} and {@link #unregister} on any thread (the connecting thread
 * creates channels); {@link #doWork} on the progress thread. A lock guards the dispatch table.
 * <b>Lifecycle:</b> {@link #close()} by the node after every connection's QPs.
 */
public final class SharedCompletionQueue implements ProgressAgent, CompletionSink, AutoCloseable {
    private static final int BATCH = 64;

    private final String name;
    private final CompletionQueue cq;
    private final int maxQueuePairs;
    private final int entriesPerQp;
    private final Int2ObjectHashMap<CompletionSink> sinks = new Int2ObjectHashMap<>();
    /** Closed QPs whose last completions may still be in the CQ: number, and the pass at which it closed. */
    private final Int2ObjectHashMap<long[]> closedAt = new Int2ObjectHashMap<>();
    private long passes;
    private int live;
    private long dispatched;
    private long orphans;
    private boolean closed;

    /**
     * One CQ per device of a node (seed 000 &sect;5.1: per device, not per node), each for {@code maxQueuePairs}
     * of that device's queue pairs; named {@code name} alone with one device, {@code name device} with several.
     *
     * @throws IllegalArgumentException as {@link #SharedCompletionQueue}; the CQs made before are closed
     */
    public static SharedCompletionQueue[] perDevice(String name, java.util.List<Device> devices, int maxQueuePairs, int entriesPerQp) {
        SharedCompletionQueue[] cqs = new SharedCompletionQueue[devices.size()];
        try {
            for (int d = 0; d < cqs.length; d++) {
                cqs[d] = new SharedCompletionQueue(cqs.length == 1 ? name : name + " " + devices.get(d).name(), devices.get(d),
                    maxQueuePairs, entriesPerQp);
            }
        } catch (RuntimeException e) {
            for (SharedCompletionQueue cq : cqs) {
                if (cq != null) {
                    cq.close();
                }
            }
            throw e;
        }
        return cqs;
    }

    /**
     * Creates the CQ on {@code device}.
     *
     * @param maxQueuePairs queue pairs it may serve at once, &ge; 1
     * @param entriesPerQp  completions one queue pair can have outstanding, &ge; 1
     * @throws IllegalArgumentException naming the value if a count is out of range or the product exceeds
     *     the device's largest CQ
     */
    public SharedCompletionQueue(String name, Device device, int maxQueuePairs, int entriesPerQp) {
        if (maxQueuePairs < 1) {
            throw new IllegalArgumentException("sharedCompletionQueue queue pairs >= 1 required but it was " + maxQueuePairs);
        }
        if (entriesPerQp < 1) {
            throw new IllegalArgumentException("entriesPerQp >= 1 required but it was " + entriesPerQp);
        }
        long entries = (long) maxQueuePairs * entriesPerQp;
        int max = device.capabilities().maxCqEntries();
        if (entries > max) {
            throw new IllegalArgumentException("a shared CQ for " + maxQueuePairs + " queue pairs x " + entriesPerQp + " completions each = "
                + entries + " entries exceeds device '" + device.name() + "''s largest CQ of " + max
                + "; lower RdmaNode.Builder.sharedCompletionQueue(..) to at most " + max / entriesPerQp + " or use smaller buffer counts");
        }
        this.name = name;
        this.maxQueuePairs = maxQueuePairs;
        this.entriesPerQp = entriesPerQp;
        this.cq = device.createCompletionQueue((int) entries);
    }

    /** The CQ to create the node's queue pairs with. */
    public CompletionQueue cq() {
        return cq;
    }

    /**
     * Routes the completions of queue pair {@code qpNumber} to {@code sink} (on the progress thread).
     *
     * @throws RdmaException of category CONFIGURATION if {@code maxQueuePairs} are served already, naming the
     *     limit and the builder option
     */
    public synchronized void register(int qpNumber, CompletionSink sink) {
        if (closed) {
            throw new IllegalStateException("shared CQ " + name + " is closed");
        }
        if (live >= maxQueuePairs) {
            throw new RdmaException(RdmaException.Category.CONFIGURATION, "the shared CQ of " + name + " serves " + maxQueuePairs
                + " queue pairs already (" + entriesPerQp + " completions each); raise RdmaNode.Builder.sharedCompletionQueue(..)"
                + " or close connections");
        }
        closedAt.remove(qpNumber);
        sinks.put(qpNumber, sink);
        live++;
    }

    /**
     * Queue pair {@code qpNumber} is being destroyed: what of it is still in the CQ goes to {@code afterClose}
     * until a pass finds the CQ drained.
     */
    public synchronized void unregister(int qpNumber, CompletionSink afterClose) {
        if (sinks.get(qpNumber) == null || closedAt.containsKey(qpNumber)) {
            return;
        }
        sinks.put(qpNumber, afterClose);
        closedAt.put(qpNumber, new long[] {passes});
        live--;
    }

    /** Polls the CQ and dispatches; progress thread. @return completions handled */
    @Override
    public synchronized int doWork(long nowNs) {
        if (closed) {
            return 0;
        }
        int work = 0;
        int n;
        while ((n = cq.poll(BATCH, this)) > 0) {
            work += n;
            if (n < BATCH) {
                break;
            }
        }
        passes++;
        if (!closedAt.isEmpty() && work == 0) {
            // the CQ is empty and every QP closed before this pass is destroyed: nothing more comes for them
            List<Integer> gone = new ArrayList<>();
            closedAt.forEach((qpn, at) -> {
                if (at[0] < passes - 1) {
                    gone.add(qpn);
                }
            });
            for (int qpn : gone) {
                closedAt.remove(qpn);
                sinks.remove(qpn);
            }
        }
        return work;
    }

    @Override
    public void onCompletion(WorkCompletion wc) {
        @Nullable CompletionSink sink = sinks.get(wc.qpNumber());
        if (sink == null) {
            orphans++;
            return;
        }
        dispatched++;
        sink.onCompletion(wc);
    }

    @Override
    public String roleName() {
        return "shared-cq-" + name;
    }

    /** Queue pairs served now. */
    public synchronized int queuePairs() {
        return live;
    }

    /** Completions dispatched so far. */
    public synchronized long dispatched() {
        return dispatched;
    }

    /** Completions for no known queue pair (dropped). */
    public synchronized long orphans() {
        return orphans;
    }

    public int capacity() {
        return cq.capacity();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        cq.close();
        sinks.clear();
        closedAt.clear();
    }
}
