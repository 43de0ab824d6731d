package io.rdmaflux.core;

import io.rdmaflux.verbs.MemoryRegion;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A message in memory the application registered with the node ({@link RdmaNode#registerMemory}):
 * a large one is RDMA-written straight from it, with no staging copy. The connection keeps its
 * reference until every stripe completed, so the bytes must not change until the send's
 * {@code Mono} completes; releasing it does not deregister the region (the application owns it).
 */
final class RegisteredMessage extends RdmaMessage {
    private final MemoryRegion region;
    private final long offset;
    private final int length;
    private final UnsafeBuffer view;

    RegisteredMessage(MemoryRegion region, long offset, int length) {
        this.region = region;
        this.offset = offset;
        this.length = length;
        this.view = new UnsafeBuffer(region.address() + offset, length);
    }

    MemoryRegion region() {
        return region;
    }

    long address() {
        return region.address() + offset;
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
        // the application owns the region
    }

    @Override
    public String toString() {
        return "RdmaMessage{" + length + " bytes at offset " + offset + " of registered region rkey=" + region.rkey() + "}";
    }
}
