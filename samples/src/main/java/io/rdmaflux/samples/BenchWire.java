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
 * client -> server, first:      HELLO  | magic 'RBH2' (4) | test (1) | window (4) | steps n (4) |
 *                                        n x ( size (4) | warm-up (4) | iterations (4) | printed (1) ) |
 * server -> client, the answer: READY  | magic 'RBR1' (4) |
 *                            or REJECT | magic 'RBX1' (4) | reason UTF-8 |
 * client -> server, before each bw/bibw/msg-rate round:  GO  | magic 'RBG2' (4) | step index (4) | messages (8) |
 * server -> client, when it received that round's data: ACK | magic 'RBA1' (4) | step index (4) | messages received (8) |
 * </pre>
 * A streaming step runs two rounds when it has warm-up iterations (the skipped windows, then the timed
 * ones), else one. Between them travel the data messages of each step, in order (RC and the reorder queue keep the
 * connection's order), so every message's meaning follows from its position; the magics only
 * guard against a peer that speaks something else (another test, another version).
 */
final class BenchWire {
    static final int HELLO = 0x52424832;
    static final int READY = 0x52425231;
    static final int REJECT = 0x52425831;
    static final int GO = 0x52424732;
    static final int ACK = 0x52424131;
    /** Most sizes one HELLO lists (1:64m is 27); the JIT warm-up step comes on top. */
    static final int MAX_SIZES = 1024;
    private static final int HELLO_BYTES = 13;
    private static final int STEP_BYTES = 13;

    private BenchWire() {
    }

    /**
     * What the client asks the server to serve: the test, the window, and the steps in order (each a
     * size with its skipped and timed iterations, {@link OsuSchedule}).
     */
    record Hello(BenchCommand.Test test, int window, List<OsuSchedule.Step> steps) {
        Hello {
            steps = List.copyOf(steps);
        }

        /** Data messages of one streaming round of {@code iterations} windows. */
        long messages(int iterations) {
            return (long) iterations * window;
        }

        /** The sizes of the printed steps, in order. */
        List<Integer> sizes() {
            return steps.stream().filter(OsuSchedule.Step::printed).map(OsuSchedule.Step::sizeBytes).toList();
        }

        RdmaMessage encode() {
            ByteBuffer b = ByteBuffer.allocate(HELLO_BYTES + STEP_BYTES * steps.size());
            b.putInt(HELLO).put((byte) test.ordinal()).putInt(window).putInt(steps.size());
            for (OsuSchedule.Step s : steps) {
                b.putInt(s.sizeBytes()).putInt(s.warmup()).putInt(s.iterations()).put((byte) (s.printed() ? 1 : 0));
            }
            return RdmaMessage.of(b.array());
        }

        /** @throws UserError if {@code m} is not a well-formed HELLO */
        static Hello decode(RdmaMessage m) {
            DirectBuffer c = m.content();
            int len = m.lengthBytes();
            if (len < HELLO_BYTES || c.getInt(0, ByteOrder.BIG_ENDIAN) != HELLO) {
                throw new UserError("the peer's first message (" + len + " bytes) is not a bench HELLO; is it an rdmaflux bench --connect of the same version?");
            }
            int test = c.getByte(4);
            int n = c.getInt(9, ByteOrder.BIG_ENDIAN);
            BenchCommand.Test[] tests = BenchCommand.Test.values();
            if (test < 0 || test >= tests.length || n < 1 || n > MAX_SIZES + 1 || len != HELLO_BYTES + STEP_BYTES * n) {
                throw new UserError("the peer's bench HELLO is malformed (test " + test + ", " + n + " steps in " + len + " bytes)");
            }
            List<OsuSchedule.Step> steps = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                int at = HELLO_BYTES + STEP_BYTES * i;
                int size = c.getInt(at, ByteOrder.BIG_ENDIAN);
                int warmup = c.getInt(at + 4, ByteOrder.BIG_ENDIAN);
                int iterations = c.getInt(at + 8, ByteOrder.BIG_ENDIAN);
                byte printed = c.getByte(at + 12);
                if (size < 1 || warmup < 0 || iterations < 1 || (printed & ~1) != 0) {
                    throw new UserError("the peer's bench HELLO is malformed (step " + i + ": size " + size + ", warm-up " + warmup
                        + ", iterations " + iterations + ", printed flag " + printed + ")");
                }
                steps.add(new OsuSchedule.Step(size, warmup, iterations, printed == 1));
            }
            return new Hello(tests[test], c.getInt(5, ByteOrder.BIG_ENDIAN), steps);
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

    static RdmaMessage go(int stepIndex, long messages) {
        return RdmaMessage.of(ByteBuffer.allocate(16).putInt(GO).putInt(stepIndex).putLong(messages).array());
    }

    /** @throws UserError if {@code m} is not the GO of {@code stepIndex} for a round of {@code messages} */
    static void expectGo(RdmaMessage m, int stepIndex, long messages) {
        DirectBuffer c = m.content();
        if (m.lengthBytes() != 16 || c.getInt(0, ByteOrder.BIG_ENDIAN) != GO || c.getInt(4, ByteOrder.BIG_ENDIAN) != stepIndex
            || c.getLong(8, ByteOrder.BIG_ENDIAN) != messages) {
            throw new UserError("expected the peer's GO of " + messages + " messages for step #" + stepIndex + " but got a message of "
                + m.lengthBytes() + " bytes");
        }
    }

    static RdmaMessage ack(int stepIndex, long messages) {
        return RdmaMessage.of(ByteBuffer.allocate(16).putInt(ACK).putInt(stepIndex).putLong(messages).array());
    }

    /** @throws UserError if {@code m} is not the ACK of step {@code stepIndex} for {@code messages} */
    static void expectAck(RdmaMessage m, int stepIndex, long messages) {
        DirectBuffer c = m.content();
        if (m.lengthBytes() != 16 || c.getInt(0, ByteOrder.BIG_ENDIAN) != ACK || c.getInt(4, ByteOrder.BIG_ENDIAN) != stepIndex
            || c.getLong(8, ByteOrder.BIG_ENDIAN) != messages) {
            throw new UserError("expected the peer's ACK of " + messages + " messages for step #" + stepIndex + " but got a message of "
                + m.lengthBytes() + " bytes");
        }
    }
}
