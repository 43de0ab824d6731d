package io.rdmaflux.core;

import io.rdmaflux.core.channel.RcSubchannel;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A message that arrived in one receive buffer: a view of the buffer's payload, one object per
 * buffer, reused when the buffer is filled again. Its final release hands the buffer back to the
 * connection (through a lock-free queue, from any thread), which reposts it and credits it.
 */
final class ReceivedMessage extends RdmaMessage {
    private final DefaultRdmaConnection connection;
    private final RcSubchannel subchannel;
    private final int slot;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private int psn;
    private int length;

    ReceivedMessage(DefaultRdmaConnection connection, RcSubchannel subchannel, int slot) {
        super(0);
        this.connection = connection;
        this.subchannel = subchannel;
        this.slot = slot;
    }

    void init(int psn, DirectBuffer memory, int payloadOffset, int length) {
        this.psn = psn;
        this.length = length;
        if (memory.byteArray() == null) {
            // registered (off-heap) memory, always for receive buffers: wrap by address, skipping the checks of a buffer wrap
            view.wrap(memory.addressOffset() + payloadOffset, Math.max(length, 0));
        } else {
            view.wrap(memory, payloadOffset, Math.max(length, 0));
        }
        resetRefCnt();
    }

    @Override
    protected void deallocate() {
        connection.onReleased(this);
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

    RcSubchannel subchannel() {
        return subchannel;
    }

    int slot() {
        return slot;
    }

    @Override
    public String toString() {
        return "RdmaMessage{psn=" + psn + ", " + length + " bytes, receive buffer " + slot + " of rail " + subchannel.rail()
            + " of " + connection.name() + "}";
    }
}
