package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import org.agrona.DirectBuffer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The control messages of a two-sided {@code bench} run between a client (the side that measures
 * and prints) and a server (the side that echoes, counts and acknowledges), all big-endian:
 *
 * <pre>
 * client -> server, first:      HELLO  | magic 'RBH1' (4) | test (1) | warm-up (4) | iterations (4) | window (4) | sizes n (4) | n x size (4) |
 * server -> client, the answer: READY  | magic 'RBR1' (4) |
 *                            or REJECT | magic 'RBX1' (4) | reason UTF-8 |
 * client -> server, before each bw/bibw/msg-rate size:  GO  | magic 'RBG1' (4) | size index (4) |
 * server -> client, when it received that size's data:  ACK | magic 'RBA1' (4) | size index (4) | messages received (8) |
 * </pre>
 * Between them travel the data messages of each size, in order (RC and the reorder queue keep the
 * connection's order), so every message's meaning follows from its position; the magics only
 * guard against a peer that speaks something else (another test, another version).
 */
final class BenchWire {
    static final int HELLO = 0x52424831;
    static final int READY = 0x52425231;
    static final int REJECT = 0x52425831;
    static final int GO = 0x52424731;
    static final int ACK = 0x52424131;
    /** Most sizes one HELLO lists (1:64m is 27). */
    static final int MAX_SIZES = 1024;

    private BenchWire() {
    }

    /** What the client asks the server to serve. */
    record Hello(BenchCommand.Test test, int warmup, int iterations, int window, List<Integer> sizes) {
        Hello {
            sizes = List.copyOf(sizes);
        }

        /** Data messages each side sends per size for the streaming tests. */
        long messages() {
            return (long) iterations * window;
        }

        RdmaMessage encode() {
            ByteBuffer b = ByteBuffer.allocate(21 + 4 * sizes.size());
            b.putInt(HELLO).put((byte) test.ordinal()).putInt(warmup).putInt(iterations).putInt(window).putInt(sizes.size());
            for (int s : sizes) {
                b.putInt(s);
            }
            return RdmaMessage.of(b.array());
        }

        /** @throws UserError if {@code m} is not a well-formed HELLO */
        static Hello decode(RdmaMessage m) {
            DirectBuffer c = m.content();
            int len = m.lengthBytes();
            if (len < 21 || c.getInt(0, ByteOrder.BIG_ENDIAN) != HELLO) {
                throw new UserError("the peer's first message (" + len + " bytes) is not a bench HELLO; is it an rdmaflux bench --connect of the same version?");
            }
            int test = c.getByte(4);
            int n = c.getInt(17, ByteOrder.BIG_ENDIAN);
            BenchCommand.Test[] tests = BenchCommand.Test.values();
            if (test < 0 || test >= tests.length || n < 1 || n > MAX_SIZES || len != 21 + 4 * n) {
                throw new UserError("the peer's bench HELLO is malformed (test " + test + ", " + n + " sizes in " + len + " bytes)");
            }
            List<Integer> sizes = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                sizes.add(c.getInt(21 + 4 * i, ByteOrder.BIG_ENDIAN));
            }
            return new Hello(tests[test], c.getInt(5, ByteOrder.BIG_ENDIAN), c.getInt(9, ByteOrder.BIG_ENDIAN),
                c.getInt(13, ByteOrder.BIG_ENDIAN), sizes);
        }
    }

    static RdmaMessage ready() {
        return RdmaMessage.of(ByteBuffer.allocate(4).putInt(READY).array());
    }

    static RdmaMessage reject(String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        return RdmaMessage.of(ByteBuffer.allocate(4 + r.length).putInt(REJECT).put(r).array());
    }

    /**
     * Checks the server's answer to HELLO.
     *
     * @throws UserError carrying the server's reason if it rejected, or if {@code m} is no answer
     */
    static void expectReady(RdmaMessage m, String peer) {
        int len = m.lengthBytes();
        int magic = len >= 4 ? m.content().getInt(0, ByteOrder.BIG_ENDIAN) : 0;
        if (len == 4 && magic == READY) {
            return;
        }
        if (magic == REJECT) {
            byte[] r = new byte[len - 4];
            m.content().getBytes(4, r);
            throw new UserError("the listener at " + peer + " refused: " + new String(r, StandardCharsets.UTF_8));
        }
        throw new UserError("the listener at " + peer + " answered HELLO with a message of " + len
            + " bytes that is not READY; is it an rdmaflux bench --listen of the same version?");
    }

    static RdmaMessage go(int sizeIndex) {
        return RdmaMessage.of(ByteBuffer.allocate(8).putInt(GO).putInt(sizeIndex).array());
    }

    /** @throws UserError if {@code m} is not the GO of {@code sizeIndex} */
    static void expectGo(RdmaMessage m, int sizeIndex) {
        if (m.lengthBytes() != 8 || m.content().getInt(0, ByteOrder.BIG_ENDIAN) != GO || m.content().getInt(4, ByteOrder.BIG_ENDIAN) != sizeIndex) {
            throw new UserError("expected the peer's GO for size #" + sizeIndex + " but got a message of " + m.lengthBytes() + " bytes");
        }
    }

    static RdmaMessage ack(int sizeIndex, long messages) {
        return RdmaMessage.of(ByteBuffer.allocate(16).putInt(ACK).putInt(sizeIndex).putLong(messages).array());
    }

    /** @throws UserError if {@code m} is not the ACK of {@code sizeIndex} for {@code messages} */
    static void expectAck(RdmaMessage m, int sizeIndex, long messages) {
        DirectBuffer c = m.content();
        if (m.lengthBytes() != 16 || c.getInt(0, ByteOrder.BIG_ENDIAN) != ACK || c.getInt(4, ByteOrder.BIG_ENDIAN) != sizeIndex
            || c.getLong(8, ByteOrder.BIG_ENDIAN) != messages) {
            throw new UserError("expected the peer's ACK of " + messages + " messages for size #" + sizeIndex + " but got a message of "
                + m.lengthBytes() + " bytes");
        }
    }
}
