package io.rdmaflux.core;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * A message reassembled from several DATA fragments into its own off-heap buffer. Fragments are
 * copied in as they arrive and their receive buffers freed at once, so reassembly never holds
 * credits (a message larger than all receive buffers together still gets through).
 */
final class AssembledMessage extends RdmaMessage {
    private final DefaultRdmaConnection connection;
    private final UnsafeBuffer buffer;
    private final int psn;
    private int filled;

    AssembledMessage(DefaultRdmaConnection connection, int psn, int length) {
        this.connection = connection;
        this.psn = psn;
        this.buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(length));
    }

    /** Appends a fragment; returns false if it would overflow the announced length. */
    boolean append(DirectBuffer src, int offset, int length) {
        if (filled + length > buffer.capacity()) {
            return false;
        }
        buffer.putBytes(filled, src, offset, length);
        filled += length;
        return true;
    }

    boolean isComplete() {
        return filled == buffer.capacity();
    }

    @Override
    protected void deallocate() {
        connection.assembler().onAssembledReleased();
    }


    @Override
    protected DirectBuffer view() {
        return buffer;
    }

    @Override
    public int lengthBytes() {
        return buffer.capacity();
    }

    @Override
    public int psn() {
        return psn;
    }

    @Override
    public String toString() {
        return "RdmaMessage{psn=" + psn + ", " + buffer.capacity() + " bytes, reassembled, of " + connection.name() + "}";
    }
}
