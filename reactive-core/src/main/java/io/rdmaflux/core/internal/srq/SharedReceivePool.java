package io.rdmaflux.core.internal.srq;

import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.internal.buffer.SharedSlotRegion;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;

/**
 * One node's receive buffers for one rail, kept posted on one shared receive queue that every RC
 * connection of the rail consumes (seed 003 &sect;2.1): {@code buffers} registered slots of
 * {@code bufferBytes}, of which {@code controlReserve} are kept out of the {@link SrqCreditBudget} for
 * control frames (CREDIT, CLOSE, CTS, FIN: they take no credit and are reposted at once; a burst beyond
 * the reserve is covered by RC's RNR retry, as with per-connection pools).
 *
 * <p>A receive buffer belongs to no connection while posted; a completion hands it to the connection
 * whose QP consumed it ({@link SrqReceiveShare#adopt}), which reposts it when done with it. So a buffer
 * is in exactly one of three places: posted, held by one connection, or (while a connection is closed)
 * drained from its completion queue back to the SRQ: {@link #posted()} plus every share's adopted
 * buffers is {@link #buffers()} whenever no completion is pending, which the tests check.
 *
 * <p><b>Concurrency:</b> thread-safe ({@link #repost} under a lock). <b>Lifecycle:</b> {@link #close()}
 * destroys the SRQ and deregisters the region; the node closes it after its connections' QPs.
 */
public final class SharedReceivePool implements AutoCloseable {
    private final String name;
    private final SharedSlotRegion region;
    private final SharedReceiveQueue srq;
    private final SrqCreditBudget budget;
    private final ReceiveWorkRequest wr = new ReceiveWorkRequest();
    private final int creditWindow;
    private boolean closed;

    /**
     * Registers the buffers, creates the SRQ and posts every buffer.
     *
     * @param bufferBytes    size of every receive buffer, frame header included, bytes
     * @param buffers        receive buffers of the pool, &gt; controlReserve
     * @param controlReserve buffers kept for control frames, not lent as credit, &ge; 1
     * @throws IllegalArgumentException naming the value if {@code buffers <= controlReserve} or {@code controlReserve < 1}
     * @throws VerbsException if the device has no SRQs or refuses the size
     */
    public SharedReceivePool(String name, ProtectionDomain pd, int bufferBytes, int buffers, int controlReserve) {
        this(name, pd, bufferBytes, buffers, controlReserve, Integer.MAX_VALUE);
    }

    /**
     * As above, with at most {@code creditWindow} unused credits per connection (see {@link #creditWindow()}).
     *
     * @throws IllegalArgumentException naming the value if {@code creditWindow < 1}
     */
    public SharedReceivePool(String name, ProtectionDomain pd, int bufferBytes, int buffers, int controlReserve, int creditWindow) {
        this(name, pd, bufferBytes, buffers, controlReserve, creditWindow, pd::createSharedReceiveQueue);
    }

    /**
     * As above, with the shared receive queue made by {@code srqFactory} (given the number of buffers) instead of
     * {@code pd}: a channel kind whose queue pairs are not the device's consumes a queue of its own making
     * ({@link SharedPoolChannelProvider}).
     */
    public SharedReceivePool(String name, ProtectionDomain pd, int bufferBytes, int buffers, int controlReserve, int creditWindow,
                             java.util.function.IntFunction<SharedReceiveQueue> srqFactory) {
        if (creditWindow < 1) {
            throw new IllegalArgumentException("creditWindow >= 1 required but it was " + creditWindow);
        }
        this.creditWindow = creditWindow;
        if (controlReserve < 1) {
            throw new IllegalArgumentException("controlReserve >= 1 required but it was " + controlReserve);
        }
        if (buffers <= controlReserve) {
            throw new IllegalArgumentException("shared receive buffers > " + controlReserve + " (the control reserve) required but it was "
                + buffers + "; raise RdmaNode.Builder.sharedReceiveBuffers(..)");
        }
        this.name = name;
        this.budget = new SrqCreditBudget(buffers - controlReserve);
        SharedSlotRegion r = new SharedSlotRegion(name, pd, bufferBytes, buffers, Access.LOCAL_WRITE);
        SharedReceiveQueue q;
        try {
            q = srqFactory.apply(buffers);
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
        this.region = r;
        this.srq = q;
        for (int i = 0; i < buffers; i++) {
            int g = r.acquire();
            post(g);
        }
    }

    /**
     * The most credits a connection's peer holds unused: a credit granted cannot be taken back, so an idle
     * peer's credits stay lent; capping them keeps {@code connections x creditWindow} the most that idle
     * peers can hold, and a newcomer finds buffers as long as the pool has more than that.
     */
    public int creditWindow() {
        return creditWindow;
    }

    /** The SRQ that the rail's QPs are created with. */
    public SharedReceiveQueue srq() {
        return srq;
    }

    public SharedSlotRegion region() {
        return region;
    }

    public SrqCreditBudget budget() {
        return budget;
    }

    /** Receive buffers of the pool. */
    public int buffers() {
        return region.capacity();
    }

    /** Receives posted on the SRQ now. */
    public int posted() {
        return srq.outstanding();
    }

    /** Gives receive buffer {@code slot} back to the SRQ (a connection is done with it); after close, nothing. */
    public synchronized void repost(int slot) {
        if (closed) {
            return;
        }
        post(slot);
    }

    private void post(int slot) {
        wr.wrId(WorkRequestTokens.WR_RECV | slot).sge(region.address(slot), region.slotBytes(), region.region().lkey());
        if (!srq.postReceive(wr)) {
            // cannot happen: the SRQ holds one entry per buffer and a buffer is posted at most once
            throw new VerbsException("shared receive queue '" + name + "' is full: buffer " + slot + " was posted twice");
        }
    }

    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        srq.close();
        region.close();
    }

    @Override
    public String toString() {
        return "SharedReceivePool{" + name + ", posted=" + posted() + "/" + buffers() + ", " + budget + "}";
    }
}
