package io.rdmaflux.core;

import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * A message of the remaining bytes of an application's direct {@link ByteBuffer}
 * ({@link RdmaMessage#of(ByteBuffer)}). A large one (above the node's rendezvous threshold) is sent by
 * reference: its memory is registered through the node's registration cache (or found there) and
 * RDMA-written or RDMA-read from where it is, with no staging copy; the connection keeps the message,
 * and the cache pins the registration, until the NIC is done with the memory. So the bytes must not
 * change until the send's {@code Mono} completes. A small one is copied into a send buffer like any other.
 */
final class DirectBufferMessage extends RdmaMessage {
    private final ByteBuffer buffer;
    private final long address;
    private final int length;
    private final UnsafeBuffer view;

    DirectBufferMessage(ByteBuffer buffer) {
        this.buffer = buffer;
        this.length = buffer.remaining();
        this.address = BufferUtil.address(buffer) + buffer.position();
        this.view = new UnsafeBuffer(address, length);
    }

    /** The buffer (the cache registers its whole memory and keeps it reachable while cached). */
    ByteBuffer buffer() {
        return buffer;
    }

    /** Native address of the first byte of the message. */
    long address() {
        return address;
    }

    @Override
    public int lengthBytes() {
        return length;
    }

    @Override
    protected DirectBuffer view() {
        return view;
    }

    @Override
    protected void deallocate() {
        // the application owns the buffer
    }

    @Override
    public String toString() {
        return "RdmaMessage{" + length + " bytes of a direct buffer at 0x" + Long.toHexString(address) + "}";
    }
}
