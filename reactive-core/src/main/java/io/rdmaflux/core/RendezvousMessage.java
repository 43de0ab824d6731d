package io.rdmaflux.core;

import io.rdmaflux.core.buffer.MessageBufferPool;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A message that arrived by rendezvous: a view of the registered message buffer its stripes were
 * RDMA-written into, in place (no reassembly copy; seed 000 &sect;4.3). One object per pool slot and
 * connection, reused. Its final release returns the slot to the node's {@link MessageBufferPool} at
 * once (lock-free, from any thread), so the next waiting RTS can get its CTS.
 */
final class RendezvousMessage extends RdmaMessage {
    private final DefaultRdmaConnection connection;
    private final MessageBufferPool pool;
    private final int slot;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private int psn;
    private int length;

    RendezvousMessage(DefaultRdmaConnection connection, MessageBufferPool pool, int slot) {
        super(0);
        this.connection = connection;
        this.pool = pool;
        this.slot = slot;
    }

    void init(int psn, int length) {
        this.psn = psn;
        this.length = length;
        view.wrap(pool.memory(), pool.offset(slot), length);
        resetRefCnt();
    }

    @Override
    protected void deallocate() {
        pool.release(slot);
        connection.onRendezvousReleased();
    }


    @Override
    protected DirectBuffer view() {
        return view;
    }

    @Override
    public int lengthBytes() {
        return length;
    }

    @Override
    public int psn() {
        return psn;
    }

    @Override
    public String toString() {
        return "RdmaMessage{psn=" + psn + ", " + length + " bytes, rendezvous buffer " + slot + " of " + connection.name() + "}";
    }
}
