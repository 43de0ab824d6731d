package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import org.agrona.DirectBuffer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The three control messages of the two-process pipeline, all big-endian, around the data
 * messages (raw chunks of the source, in order):
 *
 * <pre>
 * sender -> receiver, first:  HEADER  | magic 'RFH1' (4) | total bytes (8) | flags (4, bit 0 records) | files (4) | name length (2) | name UTF-8 |
 * sender -> receiver, last:   TRAILER | magic 'RFT1' (4) | SHA-256 of the source (32) |
 * receiver -> sender:         VERDICT | magic 'RFV1' (4) | verified (1) | bytes received (8) | out-of-order (8) | SHA-256 received (32) |
 * </pre>
 * The receiver knows the trailer as the first message after {@code total bytes} of data; the
 * magics only guard against a peer that speaks something else.
 */
final class PipelineWire {
    static final int HEADER_MAGIC = 0x52464831;
    static final int TRAILER_MAGIC = 0x52465431;
    static final int VERDICT_MAGIC = 0x52465631;
    static final int FLAG_RECORDS = 1;
    private static final int MAX_NAME_BYTES = 1024;

    private PipelineWire() {
    }

    /** What the sender announces before the data. */
    record Header(long totalBytes, boolean records, int files, String name) {
        RdmaMessage encode() {
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            int len = Math.min(n.length, MAX_NAME_BYTES);
            ByteBuffer b = ByteBuffer.allocate(22 + len);
            b.putInt(HEADER_MAGIC).putLong(totalBytes).putInt(records ? FLAG_RECORDS : 0).putInt(files).putShort((short) len).put(n, 0, len);
            return RdmaMessage.of(b.array());
        }

        /** @throws UserError if {@code m} is not a header */
        static Header decode(RdmaMessage m) {
            DirectBuffer c = m.content();
            int len = m.lengthBytes();
            if (len < 22 || c.getInt(0, java.nio.ByteOrder.BIG_ENDIAN) != HEADER_MAGIC) {
                throw new UserError("the sender's first message is not an rdmaflux pipeline header (" + len
                    + " bytes); is the peer an rdmaflux pipeline --connect of the same version?");
            }
            long total = c.getLong(4, java.nio.ByteOrder.BIG_ENDIAN);
            int flags = c.getInt(12, java.nio.ByteOrder.BIG_ENDIAN);
            int files = c.getInt(16, java.nio.ByteOrder.BIG_ENDIAN);
            int nameLen = Math.min(c.getShort(20, java.nio.ByteOrder.BIG_ENDIAN) & 0xffff, len - 22);
            byte[] n = new byte[nameLen];
            c.getBytes(22, n);
            if (total < 0) {
                throw new UserError("the sender's header announces " + total + " bytes");
            }
            return new Header(total, (flags & FLAG_RECORDS) != 0, files, new String(n, StandardCharsets.UTF_8));
        }
    }

    static RdmaMessage trailer(byte[] sha256) {
        return RdmaMessage.of(ByteBuffer.allocate(36).putInt(TRAILER_MAGIC).put(sha256).array());
    }

    /** @return the source's SHA-256 the trailer carries; @throws UserError if {@code m} is not a trailer */
    static byte[] decodeTrailer(RdmaMessage m) {
        if (m.lengthBytes() != 36 || m.content().getInt(0, java.nio.ByteOrder.BIG_ENDIAN) != TRAILER_MAGIC) {
            throw new UserError("expected the sender's trailer (SHA-256) after the announced bytes but got a message of "
                + m.lengthBytes() + " bytes; the sender sent more data than its header said");
        }
        byte[] sha = new byte[32];
        m.content().getBytes(4, sha);
        return sha;
    }

    /** The receiver's answer. */
    record Verdict(boolean verified, long receivedBytes, long outOfOrder, byte[] sha256) {
        RdmaMessage encode() {
            return RdmaMessage.of(ByteBuffer.allocate(53).putInt(VERDICT_MAGIC).put((byte) (verified ? 1 : 0)).putLong(receivedBytes)
                .putLong(outOfOrder).put(sha256).array());
        }

        /** @throws UserError if {@code m} is not a verdict */
        static Verdict decode(RdmaMessage m) {
            DirectBuffer c = m.content();
            if (m.lengthBytes() != 53 || c.getInt(0, java.nio.ByteOrder.BIG_ENDIAN) != VERDICT_MAGIC) {
                throw new UserError("the receiver answered with a message of " + m.lengthBytes() + " bytes that is not a verdict");
            }
            byte[] sha = new byte[32];
            c.getBytes(21, sha);
            return new Verdict(c.getByte(4) == 1, c.getLong(5, java.nio.ByteOrder.BIG_ENDIAN), c.getLong(13, java.nio.ByteOrder.BIG_ENDIAN), sha);
        }
    }
}
