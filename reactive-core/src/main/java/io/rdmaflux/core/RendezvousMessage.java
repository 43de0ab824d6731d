package io.rdmaflux.core;

import io.rdmaflux.core.internal.buffer.MessageBufferPool;

/**
 * A message that arrived by rendezvous: a view of the registered message buffer its stripes were
 * RDMA-written into, in place (no reassembly copy; seed 000 &sect;4.3). One object per pool slot and
 * connection, reused. Its final release returns the slot to the node's {@link MessageBufferPool} at
 * once (lock-free, from any thread), so the next waiting RTS can get its CTS.
 */
final class RendezvousMessage extends InPlaceMessage {
    private final MessageBufferPool pool;

    RendezvousMessage(DefaultRdmaConnection connection, MessageBufferPool pool, int slot) {
        super(connection, slot);
        this.pool = pool;
    }

    void init(int psn, int length) {
        view.wrap(pool.memory(), pool.offset(slot()), length);
        arrived(psn, length);
    }

    @Override
    protected void deallocate() {
        pool.release(slot());
        connection.rendezvousReceiver().onReleased();
    }

    @Override
    String where() {
        return "rendezvous buffer " + slot();
    }
}
