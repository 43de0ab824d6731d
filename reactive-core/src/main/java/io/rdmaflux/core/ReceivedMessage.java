package io.rdmaflux.core;

import io.rdmaflux.core.channel.Channel;
import org.agrona.DirectBuffer;

/**
 * A message that arrived in a receive buffer: a view of its bytes in the buffer. A whole-buffer
 * message has its buffer's own view, reused when the buffer is filled again; the messages of a packed
 * frame have {@link #pooled} views lent by the connection per message and given back at their release,
 * so the few views in use stay in cache. The final release hands the view back to the connection
 * (on the progress thread directly, from other threads through a lock-free queue), which reposts the
 * buffer once every message in it was released and credits it.
 */
final class ReceivedMessage extends InPlaceMessage {
    private Channel subchannel;
    /** Lent by the connection's view pool for one message of a packed frame (else the view of its buffer). */
    final boolean pooled;

    ReceivedMessage(DefaultRdmaConnection connection, Channel subchannel, int slot) {
        super(connection, slot);
        this.subchannel = subchannel;
        this.pooled = false;
    }

    /** A pooled view, placed by {@link #initPacked} for each message it carries. */
    ReceivedMessage(DefaultRdmaConnection connection, Channel anySubchannel) {
        super(connection, -1);
        this.subchannel = anySubchannel;
        this.pooled = true;
    }

    /**
     * Arms a pooled view for a message of a packed frame: {@code length} bytes at {@code address} of
     * receive buffer {@code slot} of {@code subchannel} (registered memory, wrapped by address).
     */
    void initPacked(Channel subchannel, int slot, int psn, long address, int length) {
        this.subchannel = subchannel;
        this.slot = slot;
        view.wrap(address, length);
        arrived(psn, length);
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
        connection.receiveBuffers().onReleased(this);
    }

    Channel subchannel() {
        return subchannel;
    }

    @Override
    String where() {
        return "receive buffer " + slot() + " of rail " + subchannel.rail();
    }
}
