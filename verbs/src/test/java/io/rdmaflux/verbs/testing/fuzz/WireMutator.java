package io.rdmaflux.verbs.testing.fuzz;

import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * A seeded, structure-aware mutator of wire encodings for the decoder fuzz tests. It starts from a
 * valid encoding ({@link Seed}) and stacks one to four mutations, most of them aimed at the
 * seed's known integer fields (lengths, counts, types) so the inputs get past the header checks
 * and reach the body parsers: a field set to a boundary value (0, -1, 2^31-1, the input's length
 * &plusmn; 1, ...), a field nudged by a small delta, a bit flip, a random byte, a truncation, an
 * extension with random bytes, a duplicated range. With probability 1/2 the {@link Seed#repair}
 * then makes the outer length field agree with the new size again, so the inner fields are tested
 * rather than only the outer length check.
 *
 * <p>Deterministic: the same {@code seed} gives the same inputs. Not thread-safe.
 */
public final class WireMutator {
    private static final int[] INTERESTING = {
        0, 1, -1, 2, 3, 4, 7, 8, 16, 23, 24, 25, 63, 64, 65, 127, 128, 255, 256, 257, 1024, 4096,
        0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0x7FFFFFFE, 0xFFFFFFFE, 1 << 20, (1 << 20) + 1, 1 << 30
    };

    /** Rewrites the outer length field(s) of a mutated input so it frames its new size; in place. */
    @FunctionalInterface
    public interface Repair {
        void apply(byte[] input);
    }

    /**
     * A valid encoding to start from.
     *
     * @param name         shown in failure reports
     * @param bytes        the encoding
     * @param fieldOffsets byte offsets of its 4-byte integer fields (lengths, counts, types)
     * @param order        the byte order of those fields
     * @param repair       re-frames an input whose size changed (may do nothing)
     */
    public record Seed(String name, byte[] bytes, int[] fieldOffsets, ByteOrder order, Repair repair) {
    }

    private final SplittableRandom random;

    public WireMutator(long seed) {
        this.random = new SplittableRandom(seed);
    }

    /** A new mutated input derived from {@code seed} (whose bytes are not modified). */
    public byte[] mutate(Seed seed) {
        byte[] b = seed.bytes().clone();
        int n = 1 + random.nextInt(4);
        for (int i = 0; i < n; i++) {
            b = mutateOnce(b, seed);
        }
        if (random.nextBoolean()) {
            seed.repair().apply(b);
        }
        return b;
    }

    private byte[] mutateOnce(byte[] b, Seed seed) {
        int[] fields = seed.fieldOffsets();
        int op = random.nextInt(10);
        if (op <= 3 && fields.length > 0) {
            int at = fields[random.nextInt(fields.length)];
            if (at + 4 <= b.length) {
                int v = op <= 1 ? interesting(b.length) : readInt(b, at, seed.order()) + random.nextInt(-16, 17);
                writeInt(b, at, v, seed.order());
            }
            return b;
        }
        if (b.length == 0) {
            return new byte[]{(byte) random.nextInt(256)};
        }
        return switch (op) {
            case 4 -> {
                int at = random.nextInt(b.length);
                b[at] ^= (byte) (1 << random.nextInt(8));
                yield b;
            }
            case 5 -> {
                b[random.nextInt(b.length)] = (byte) interesting(b.length);
                yield b;
            }
            case 6 -> Arrays.copyOf(b, random.nextInt(b.length));
            case 7 -> {
                byte[] out = Arrays.copyOf(b, b.length + 1 + random.nextInt(64));
                for (int i = b.length; i < out.length; i++) {
                    out[i] = (byte) random.nextInt(256);
                }
                yield out;
            }
            case 8 -> {
                int from = random.nextInt(b.length);
                int len = 1 + random.nextInt(Math.min(64, b.length - from));
                byte[] out = new byte[b.length + len];
                System.arraycopy(b, 0, out, 0, from + len);
                System.arraycopy(b, from, out, from + len, b.length - from);
                yield out;
            }
            default -> {
                b[random.nextInt(b.length)] = (byte) random.nextInt(256);
                yield b;
            }
        };
    }

    private int interesting(int length) {
        int k = random.nextInt(INTERESTING.length + 4);
        if (k < INTERESTING.length) {
            return INTERESTING[k];
        }
        return switch (k - INTERESTING.length) {
            case 0 -> length;
            case 1 -> length - 1;
            case 2 -> length + 1;
            default -> random.nextInt();
        };
    }

    public static int readInt(byte[] b, int at, ByteOrder order) {
        int v = (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8 | (b[at + 2] & 0xFF) << 16 | (b[at + 3] & 0xFF) << 24;
        return order == ByteOrder.LITTLE_ENDIAN ? v : Integer.reverseBytes(v);
    }

    public static void writeInt(byte[] b, int at, int value, ByteOrder order) {
        int v = order == ByteOrder.LITTLE_ENDIAN ? value : Integer.reverseBytes(value);
        b[at] = (byte) v;
        b[at + 1] = (byte) (v >>> 8);
        b[at + 2] = (byte) (v >>> 16);
        b[at + 3] = (byte) (v >>> 24);
    }
}
