package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SharedReceiveQueue;
import io.rdmaflux.verbs.VerbsException;

/** A soft SRQ: one {@link ReceiveRing} consumed, in posting order, by every QP created with it. */
final class SoftSharedReceiveQueue implements SharedReceiveQueue {
    private final SoftProtectionDomain pd;
    final ReceiveRing ring;
    private volatile boolean closed;

    SoftSharedReceiveQueue(SoftProtectionDomain pd, int maxWorkRequests) {
        this.pd = pd;
        this.ring = new ReceiveRing(maxWorkRequests, pd.softDevice().provider().threadDomain());
    }

    SoftProtectionDomain pd() {
        return pd;
    }

    @Override
    public int maxWorkRequests() {
        return ring.capacity;
    }

    @Override
    public int outstanding() {
        return ring.outstanding();
    }

    @Override
    public boolean postReceive(ReceiveWorkRequest wr) {
        if (closed) {
            throw new VerbsException("shared receive queue is closed; create a new one");
        }
        return ring.post(wr);
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        pd.forget(this);
    }
}
