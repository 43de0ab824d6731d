package io.rdmaflux.verbs.soft;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import sun.misc.Unsafe;

/**
 * Native address of direct buffers and scatter/gather copies between them.
 *
 * <p>Copies use the JDK's absolute bulk {@link ByteBuffer#put(int, ByteBuffer, int, int)} between
 * direct buffers, which is a single {@code Unsafe.copyMemory} underneath, keeps both buffers
 * reachable for the duration of the copy (so a concurrently deregistered region can never be freed
 * under it) and needs no {@code --add-exports} flag (Agrona 2's {@code UnsafeApi} would need
 * {@code jdk.internal.misc} exported). The only {@code sun.misc.Unsafe} use is reading
 * {@code Buffer.address}, which {@code jdk.unsupported} permits without flags.
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

    /**
     * Copies {@code totalBytes} from a gather list into a scatter list; both lists must hold at
     * least that many bytes (callers check).
     */
    static void scatterGather(ByteBuffer[] src, int[] srcOff, int[] srcLen, int srcCount,
                              ByteBuffer[] dst, int[] dstOff, int[] dstLen, int dstCount, int totalBytes) {
        if (srcCount == 1 && dstCount >= 1 && dstLen[0] >= totalBytes) {
            if (totalBytes > 0) {
                dst[0].put(dstOff[0], src[0], srcOff[0], totalBytes);
            }
            return;
        }
        int si = 0;
        int sPos = 0;
        int di = 0;
        int dPos = 0;
        int left = totalBytes;
        while (left > 0) {
            while (srcLen[si] - sPos == 0) {
                si++;
                sPos = 0;
            }
            while (dstLen[di] - dPos == 0) {
                di++;
                dPos = 0;
            }
            int n = Math.min(left, Math.min(srcLen[si] - sPos, dstLen[di] - dPos));
            dst[di].put(dstOff[di] + dPos, src[si], srcOff[si] + sPos, n);
            sPos += n;
            dPos += n;
            left -= n;
        }
    }
}
