package io.rdmaflux.core;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A received message that is a view of the registered memory it arrived in (a receive buffer or a
 * rendezvous buffer): a reused object, re-armed by {@link #arrived} each time it carries a new
 * message, so receiving allocates nothing. Subclasses say where the slot goes back on the final
 * release.
 */
abstract class InPlaceMessage extends RdmaMessage {
    final DefaultRdmaConnection connection;
    final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    /** The buffer slot the message is in: fixed for a slot's own view, set per message for a pooled one. */
    int slot;
    private int psn;
    private int length;

    InPlaceMessage(DefaultRdmaConnection connection, int slot) {
        super(0);
        this.connection = connection;
        this.slot = slot;
    }

    /** Re-arms the message after its slot was filled and {@link #view} wrapped; reference count 1. */
    final void arrived(int psn, int length) {
        this.psn = psn;
        this.length = length;
        resetRefCnt();
    }

    /** Where the slot lives, for {@link #toString()}: e.g. "receive buffer 3 of rail 1". */
    abstract String where();

    final int slot() {
        return slot;
    }

    @Override
    protected final DirectBuffer view() {
        return view;
    }

    @Override
    public final int lengthBytes() {
        return length;
    }

    @Override
    public final int psn() {
        return psn;
    }

    @Override
    public final String toString() {
        return "RdmaMessage{psn=" + psn + ", " + length + " bytes, " + where() + " of " + connection.name() + "}";
    }
}
