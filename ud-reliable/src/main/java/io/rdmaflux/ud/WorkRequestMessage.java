package io.rdmaflux.ud;

import io.rdmaflux.verbs.ScatterGatherEntry;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.ud.dr.MessageSource;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;

/**
 * The DR message one work request of a {@link ReliableDatagramQp} travels as: a 24-byte header, then the bytes
 * gathered from its scatter/gather list. All fields little-endian:
 * <pre>
 *  0       1       4               8                              16              20              24
 *  +-------+-------+---------------+-------------------------------+---------------+---------------+----------
 *  | op    | (0)   | immediate     | remote address (WRITE)        | rkey (WRITE)  | length, bytes | payload ...
 *  +-------+-------+---------------+-------------------------------+---------------+---------------+----------
 * </pre>
 * {@code op}: 1 SEND, 2 SEND_WITH_IMM, 3 RDMA_WRITE, 4 RDMA_WRITE_WITH_IMM. Decoding fills the public-to-package
 * fields {@link #op}, {@link #imm}, {@link #address}, {@link #rkey}, {@link #length}.
 *
 * <p><b>Concurrency:</b> not thread-safe (one per queue pair, its progress thread).
 */
final class WorkRequestMessage {
    static final int HEADER_BYTES = 24;
    static final int OP_SEND = 1;
    static final int OP_SEND_IMM = 2;
    static final int OP_WRITE = 3;
    static final int OP_WRITE_IMM = 4;

    private final UnsafeBuffer memory = new UnsafeBuffer(new byte[0]);
    private final UnsafeBuffer message = new UnsafeBuffer(new byte[0]);

    int op;
    int imm;
    long address;
    int rkey;
    int length;

    /** The message of {@code wr}, whose gathered bytes are {@code total} (the caller checked the DR limit). */
    byte[] encode(SendWorkRequest wr, int total) {
        byte[] m = new byte[HEADER_BYTES + total];
        message.wrap(m);
        message.putByte(0, (byte) opCode(wr));
        message.putInt(4, wr.immediate(), ByteOrder.LITTLE_ENDIAN);
        message.putLong(8, wr.remoteAddress(), ByteOrder.LITTLE_ENDIAN);
        message.putInt(16, wr.rkey(), ByteOrder.LITTLE_ENDIAN);
        message.putInt(20, total, ByteOrder.LITTLE_ENDIAN);
        int at = HEADER_BYTES;
        for (int i = 0; i < wr.numSge(); i++) {
            ScatterGatherEntry e = wr.sge(i);
            memory.wrap(e.address(), e.length());
            memory.getBytes(0, m, at, e.length());
            at += e.length();
        }
        return m;
    }

    /**
     * The message of {@code wr} read in place: its 24-byte header, then the bytes of its scatter/gather entries, copied
     * only as DR makes each VFRAG ({@link MessageSource}). The entries' memory is the poster's until the request
     * completes, which is after DR acknowledged the whole message, so it stays unchanged while DR reads it. The
     * entries' addresses and lengths are taken now: the work request object is reused by its poster.
     */
    MessageSource source(SendWorkRequest wr, int total) {
        byte[] header = new byte[HEADER_BYTES];
        message.wrap(header);
        message.putByte(0, (byte) opCode(wr));
        message.putInt(4, wr.immediate(), ByteOrder.LITTLE_ENDIAN);
        message.putLong(8, wr.remoteAddress(), ByteOrder.LITTLE_ENDIAN);
        message.putInt(16, wr.rkey(), ByteOrder.LITTLE_ENDIAN);
        message.putInt(20, total, ByteOrder.LITTLE_ENDIAN);
        int n = wr.numSge();
        long[] addresses = new long[n];
        int[] lengths = new int[n];
        for (int i = 0; i < n; i++) {
            ScatterGatherEntry e = wr.sge(i);
            addresses[i] = e.address();
            lengths[i] = e.length();
        }
        return new GatheredMessage(header, addresses, lengths, HEADER_BYTES + total, memory);
    }

    private static int opCode(SendWorkRequest wr) {
        return switch (wr.opcode()) {
            case SEND -> OP_SEND;
            case SEND_WITH_IMM -> OP_SEND_IMM;
            case RDMA_WRITE -> OP_WRITE;
            case RDMA_WRITE_WITH_IMM -> OP_WRITE_IMM;
            default -> throw new IllegalArgumentException("no DR message for " + wr.opcode());
        };
    }

    /** A work request's message: the header, then its entries' bytes read from registered memory when copied. */
    private record GatheredMessage(byte[] header, long[] addresses, int[] lengths, int length, UnsafeBuffer memory)
        implements MessageSource {
        @Override
        public void copyTo(int offset, MutableDirectBuffer dst, int dstOffset, int count) {
            int at = offset;
            int to = dstOffset;
            int left = count;
            if (at < HEADER_BYTES) {
                int n = Math.min(left, HEADER_BYTES - at);
                dst.putBytes(to, header, at, n);
                at += n;
                to += n;
                left -= n;
            }
            int base = HEADER_BYTES;
            for (int i = 0; i < addresses.length && left > 0; i++) {
                int end = base + lengths[i];
                if (at < end) {
                    int n = Math.min(left, end - at);
                    memory.wrap(addresses[i] + (at - base), n);
                    dst.putBytes(to, memory, 0, n);
                    at += n;
                    to += n;
                    left -= n;
                }
                base = end;
            }
        }
    }

    /** Reads {@code m}'s header into the fields. @return false if it is malformed (unknown op, length not the payload's) */
    boolean decode(byte[] m) {
        if (m.length < HEADER_BYTES) {
            op = 0;
            length = -1;
            return false;
        }
        message.wrap(m);
        op = message.getByte(0);
        imm = message.getInt(4, ByteOrder.LITTLE_ENDIAN);
        address = message.getLong(8, ByteOrder.LITTLE_ENDIAN);
        rkey = message.getInt(16, ByteOrder.LITTLE_ENDIAN);
        length = message.getInt(20, ByteOrder.LITTLE_ENDIAN);
        return length == m.length - HEADER_BYTES && op >= OP_SEND && op <= OP_WRITE_IMM;
    }

    /**
     * Reads the header at {@code offset} of {@code src} (a message's first VFRAG, at least {@link #HEADER_BYTES} long)
     * into the fields. @return false if it is malformed for a message of {@code messageLength} bytes
     */
    boolean decodeHeader(DirectBuffer src, int offset, int messageLength) {
        op = src.getByte(offset);
        imm = src.getInt(offset + 4, ByteOrder.LITTLE_ENDIAN);
        address = src.getLong(offset + 8, ByteOrder.LITTLE_ENDIAN);
        rkey = src.getInt(offset + 16, ByteOrder.LITTLE_ENDIAN);
        length = src.getInt(offset + 20, ByteOrder.LITTLE_ENDIAN);
        return length == messageLength - HEADER_BYTES && op >= OP_SEND && op <= OP_WRITE_IMM;
    }

    /** Whether the decoded op is an RDMA WRITE (with or without immediate). */
    boolean isWrite() {
        return op == OP_WRITE || op == OP_WRITE_IMM;
    }

    /** Copies the decoded payload of {@code m} to the registered memory at {@link #address}. */
    void place(byte[] m) {
        if (length > 0) {
            memory.wrap(address, length);
            memory.putBytes(0, m, HEADER_BYTES, length);
        }
    }

    /** Scatters the decoded payload of {@code m} over a posted receive's entries (the caller checked it fits). */
    void scatter(byte[] m, long[] addresses, int[] lengths) {
        int at = HEADER_BYTES;
        int left = length;
        for (int i = 0; i < addresses.length && left > 0; i++) {
            int n = Math.min(left, lengths[i]);
            memory.wrap(addresses[i], n);
            memory.putBytes(0, m, at, n);
            at += n;
            left -= n;
        }
    }
}
