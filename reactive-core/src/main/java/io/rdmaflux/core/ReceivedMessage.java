package io.rdmaflux.core;

import io.rdmaflux.core.channel.RcSubchannel;
import org.agrona.DirectBuffer;

/**
 * A message that arrived in one receive buffer: a view of the buffer's payload, one object per
 * buffer, reused when the buffer is filled again. Its final release hands the buffer back to the
 * connection (through a lock-free queue, from any thread), which reposts it and credits it.
 */
final class ReceivedMessage extends InPlaceMessage {
    private final RcSubchannel subchannel;

    ReceivedMessage(DefaultRdmaConnection connection, RcSubchannel subchannel, int slot) {
        super(connection, slot);
        this.subchannel = subchannel;
    }

    void init(int psn, DirectBuffer memory, int payloadOffset, int length) {
        if (memory.byteArray() == null) {
            // registered (off-heap) memory, always for receive buffers: wrap by address, skipping the checks of a buffer wrap
            view.wrap(memory.addressOffset() + payloadOffset, Math.max(length, 0));
        } else {
            view.wrap(memory, payloadOffset, Math.max(length, 0));
        }
        arrived(psn, length);
    }

    @Override
    protected void deallocate() {
        connection.onReleased(this);
    }

    RcSubchannel subchannel() {
        return subchannel;
    }

    @Override
    String where() {
        return "receive buffer " + slot() + " of rail " + subchannel.rail();
    }
}
