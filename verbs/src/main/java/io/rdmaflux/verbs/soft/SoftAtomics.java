package io.rdmaflux.verbs.soft;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * How the soft NIC runs the two verbs atomics on registered memory, and how their operands and results
 * travel in a {@link SoftFrame}.
 *
 * <p><b>Atomicity:</b> the responder runs the operation with a {@link VarHandle} view of the region's
 * memory ({@code getAndAdd}, {@code compareAndExchange}: a locked instruction on the 8-byte aligned
 * word), so it is atomic with respect to every other atomic on the same word, from any QP, NIC or
 * engine thread of the JVM (the mem fabric's devices share the memory; on the net fabric, each
 * request is run by the responder's NIC on its host), and to the owner's own CPU atomics through a
 * VarHandle. It is not atomic with respect to RDMA WRITEs into the same word, as on hardware
 * ({@code IBV_ATOMIC_HCA}). The word is a 64-bit integer in the native byte order of the host.
 *
 * <p><b>Frames:</b> a request ({@link FrameType#ATOMIC_FETCH_ADD}, {@link FrameType#ATOMIC_CMP_SWAP})
 * carries {@value #REQUEST_BYTES} payload bytes, {@code compareAdd} then {@code swap}; the response
 * ({@link FrameType#ATOMIC_RESPONSE}) carries the original value in {@value #RESPONSE_BYTES} bytes;
 * both little-endian, as every field of the IP fabric's frames.
 *
 * <p><b>Concurrency:</b> static functions; the frame ones on the engine thread that owns the frame.
 */
final class SoftAtomics {
    /** Payload bytes of an atomic request: compare/add, swap. */
    static final int REQUEST_BYTES = 16;
    /** Payload bytes of an atomic response: the original value. */
    static final int RESPONSE_BYTES = 8;
    /**
     * Most atomics a requester has sent and not seen answered ({@code max_rd_atomic}), and so the results
     * a responder keeps for duplicates ({@code max_dest_rd_atomic}, {@link AtomicReplayCache}).
     */
    static final int DEPTH = 16;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private SoftAtomics() {
    }

    /** Adds {@code add} to the word at {@code index} of {@code memory}; returns the word before. */
    static long fetchAndAdd(ByteBuffer memory, int index, long add) {
        return (long) LONGS.getAndAdd(memory, index, add);
    }

    /** Stores {@code swap} in the word at {@code index} if it equals {@code compare}; returns the word before. */
    static long compareAndSwap(ByteBuffer memory, int index, long compare, long swap) {
        return (long) LONGS.compareAndExchange(memory, index, compare, swap);
    }

    /** Writes {@code value} as 8 native-order bytes at {@code index} of {@code memory} (any alignment). */
    static void putNative(ByteBuffer memory, int index, long value) {
        memory.putLong(index, memory.order() == ByteOrder.nativeOrder() ? value : Long.reverseBytes(value));
    }

    /** Fills the payload of an atomic request frame from its operands. */
    static void writeRequest(SoftFrame f, long compareAdd, long swap) {
        ByteBuffer own = f.ownPayload(REQUEST_BYTES);
        putLittleEndian(own, 0, compareAdd);
        putLittleEndian(own, 8, swap);
        f.length = REQUEST_BYTES;
        f.addPayload(own, 0, REQUEST_BYTES);
    }

    /** Fills the payload of an atomic response frame with the original value. */
    static void writeResponse(SoftFrame f, long original) {
        ByteBuffer own = f.ownPayload(RESPONSE_BYTES);
        putLittleEndian(own, 0, original);
        f.length = RESPONSE_BYTES;
        f.addPayload(own, 0, RESPONSE_BYTES);
    }

    /** Whether {@code f} carries a payload of {@code bytes} bytes in its first entry (a well-formed atomic frame). */
    static boolean hasPayload(SoftFrame f, int bytes) {
        return f.length == bytes && f.payloadCount >= 1 && f.payloadLengths[0] >= bytes;
    }

    /** The little-endian 8 bytes at {@code at} of {@code f}'s first payload entry. */
    static long payloadLong(SoftFrame f, int at) {
        ByteBuffer b = f.payloadBuffers[0];
        int i = f.payloadOffsets[0] + at;
        long v = b.getLong(i);
        return b.order() == ByteOrder.LITTLE_ENDIAN ? v : Long.reverseBytes(v);
    }

    private static void putLittleEndian(ByteBuffer b, int index, long value) {
        b.putLong(index, b.order() == ByteOrder.LITTLE_ENDIAN ? value : Long.reverseBytes(value));
    }
}
