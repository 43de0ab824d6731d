package io.rdmaflux.verbs.soft;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import sun.misc.Unsafe;

/**
 * Native addresses of direct buffers and the NIC's data copies.
 *
 * <p>Uses {@code sun.misc.Unsafe}, which {@code jdk.unsupported} permits without any JVM flag
 * (Agrona 2's {@code UnsafeApi} needs {@code jdk.internal.misc} exported, which a user's JVM may not
 * have). Copies below {@value #SMALL_COPY} bytes run as a word loop, because the native
 * {@code copyMemory} call has a fixed cost that dominates a 32-byte message; larger ones are one
 * {@code copyMemory}. Callers keep the buffers behind the addresses reachable during the copy (the
 * frame references its payload buffers, the NIC's scratch list the target regions), so a region
 * deregistered concurrently is never freed under a copy.
 */
final class NativeMemory {
    private static final Unsafe UNSAFE;
    private static final long ADDRESS_OFFSET;

    static {
        try {
            Field f = Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            UNSAFE = (Unsafe) f.get(null);
            ADDRESS_OFFSET = UNSAFE.objectFieldOffset(Buffer.class.getDeclaredField("address"));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private NativeMemory() {
    }

    /** Native address of byte 0 of a direct buffer. */
    static long address(ByteBuffer direct) {
        return UNSAFE.getLong(direct, ADDRESS_OFFSET);
    }

    private static final long BYTE_ARRAY_BASE = UNSAFE.arrayBaseOffset(byte[].class);
    /** Below this many bytes a word loop beats the native copy call's fixed cost. */
    private static final int SMALL_COPY = 256;

    /** Copies {@code n} bytes between native addresses. */
    static void copy(long from, long to, long n) {
        if (n < SMALL_COPY) {
            long i = 0;
            for (; i + 8 <= n; i += 8) {
                UNSAFE.putLong(to + i, UNSAFE.getLong(from + i));
            }
            for (; i < n; i++) {
                UNSAFE.putByte(to + i, UNSAFE.getByte(from + i));
            }
        } else {
            UNSAFE.copyMemory(from, to, n);
        }
    }

    /** Copies {@code n} bytes from payload entry {@code i} of {@code f}, starting {@code pos} into it, to native {@code to}. */
    private static void copyOut(SoftFrame f, int i, int pos, long to, int n) {
        long a = f.payloadAddresses[i];
        if (a != 0) {
            copy(a + pos, to, n);
        } else {
            ByteBuffer b = f.payloadBuffers[i];
            UNSAFE.copyMemory(b.array(), BYTE_ARRAY_BASE + b.arrayOffset() + f.payloadOffsets[i] + pos, null, to, n);
        }
    }

    /**
     * Copies the first {@code totalBytes} of a frame's payload to native {@code to} (registered
     * memory the caller checked and keeps reachable, at least that long).
     */
    static void gatherInto(SoftFrame f, long to, int totalBytes) {
        int left = totalBytes;
        for (int i = 0; left > 0 && i < f.payloadCount; i++) {
            int n = Math.min(left, f.payloadLengths[i]);
            copyOut(f, i, 0, to, n);
            to += n;
            left -= n;
        }
    }

    /**
     * Copies the first {@code totalBytes} of a frame's payload into a scatter list of native
     * addresses (registered memory the caller checked and keeps reachable); the list must hold at
     * least that many bytes.
     */
    static void scatter(SoftFrame f, long[] dst, int[] dstLen, int dstCount, int totalBytes) {
        if (totalBytes == 0) {
            return;
        }
        if (f.payloadCount == 1 && dstLen[0] >= totalBytes) {
            copyOut(f, 0, 0, dst[0], totalBytes);
            return;
        }
        int si = 0;
        int sPos = 0;
        int di = 0;
        int dPos = 0;
        int left = totalBytes;
        while (left > 0) {
            while (f.payloadLengths[si] - sPos == 0) {
                si++;
                sPos = 0;
            }
            while (dstLen[di] - dPos == 0) {
                di++;
                dPos = 0;
            }
            int n = Math.min(left, Math.min(f.payloadLengths[si] - sPos, dstLen[di] - dPos));
            copyOut(f, si, sPos, dst[di] + dPos, n);
            sPos += n;
            dPos += n;
            left -= n;
        }
    }

    /** Copies payload bytes {@code [from, to)} of {@code f} to native {@code dst + from}. */
    static void copyRange(SoftFrame f, int from, int to, long dst) {
        int base = 0;
        for (int i = 0; i < f.payloadCount && base < to; i++) {
            int len = f.payloadLengths[i];
            int lo = Math.max(from, base);
            int hi = Math.min(to, base + len);
            if (hi > lo) {
                copyOut(f, i, lo - base, dst + lo, hi - lo);
            }
            base += len;
        }
    }

    /**
     * An RDMA WRITE's placement into one contiguous target, the way the soft NIC promises it
     * ({@code DeviceCapabilities.orderedWritePlacement}): every byte but the last 8, a store fence, then the
     * last 8 bytes. A reader that sees the last (8-byte aligned) word with acquire semantics sees the rest.
     */
    static void placeWrite(SoftFrame f, long dst, int length) {
        if (length <= 8) {
            copyRange(f, 0, length, dst);
            return;
        }
        copyRange(f, 0, length - 8, dst);
        UNSAFE.storeFence();
        copyRange(f, length - 8, length, dst);
    }

    /** Payload bytes {@code [from, to)} of {@code f} in a new array. */
    static byte[] readRange(SoftFrame f, int from, int to) {
        byte[] out = new byte[to - from];
        long tmp = UNSAFE.allocateMemory(Math.max(1, out.length));
        try {
            copyRange(f, from, to, tmp - from);
            UNSAFE.copyMemory(null, tmp, out, BYTE_ARRAY_BASE, out.length);
        } finally {
            UNSAFE.freeMemory(tmp);
        }
        return out;
    }

    /** Copies {@code src} to native {@code dst}. */
    static void putBytes(byte[] src, long dst) {
        UNSAFE.copyMemory(src, BYTE_ARRAY_BASE, null, dst, src.length);
    }
}
