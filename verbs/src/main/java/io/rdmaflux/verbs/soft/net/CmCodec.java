package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.QpEndpoint;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Wire format of {@link NetConnectionManager} messages (big-endian), one per TCP connection and
 * direction: the client sends a REQUEST, the listener answers ACCEPT or REJECT.
 *
 * <pre>
 *  0 magic "RDCM" u32 | 4 version u8 | 5 type u8 | 6 reserved u16 | 8 body length u32 | 12 body
 *
 *  REQUEST / ACCEPT body:
 *    u16 endpoint count, then per endpoint:
 *      u16 fabric length, fabric (UTF-8), u16 host length, host (UTF-8), u16 port,
 *      u32 QPN, u32 start PSN, u32 MTU bytes
 *    u32 private data length, private data
 *  REJECT body:
 *    u16 reason length, reason (UTF-8)
 * </pre>
 */
final class CmCodec {
    static final int MAGIC = 0x5244434D;
    static final int VERSION = 1;
    static final int HEADER_BYTES = 12;
    static final int MAX_BODY_BYTES = 1 << 20;
    static final byte REQUEST = 1;
    static final byte ACCEPT = 2;
    static final byte REJECT = 3;
    /** Fewest bytes one endpoint takes in a body: two empty strings' lengths, port, QPN, start PSN, MTU. */
    private static final int MIN_ENDPOINT_BYTES = 2 + 2 + 2 + 4 + 4 + 4;

    private CmCodec() {
    }

    static ByteBuffer encodeParams(byte type, CmParams p) {
        ByteBuffer body = ByteBuffer.allocate(8 + p.privateData().length + p.endpoints().size() * 1100);
        body.putShort((short) p.endpoints().size());
        for (QpEndpoint e : p.endpoints()) {
            putString(body, e.address().fabric());
            putString(body, e.address().host());
            body.putShort((short) e.address().port());
            body.putInt(e.qpn());
            body.putInt(e.startPsn());
            body.putInt(e.mtuBytes());
        }
        body.putInt(p.privateData().length);
        body.put(p.privateData());
        return frame(type, body.flip());
    }

    static ByteBuffer encodeReject(String reason) {
        String r = reason.length() > 2000 ? reason.substring(0, 2000) : reason;
        ByteBuffer body = ByteBuffer.allocate(2 + 3 * r.length());
        putString(body, r);
        return frame(REJECT, body.flip());
    }

    private static ByteBuffer frame(byte type, ByteBuffer body) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + body.remaining());
        b.putInt(MAGIC).put((byte) VERSION).put(type).putShort((short) 0).putInt(body.remaining()).put(body);
        return b.flip();
    }

    private static void putString(ByteBuffer b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        b.putShort((short) bytes.length);
        b.put(bytes);
    }

    /** Reads a u16-length-prefixed string, refusing a length beyond the body before allocating for it. */
    private static String getString(ByteBuffer b, String field) {
        int n = b.getShort() & 0xFFFF;
        if (n > b.remaining()) {
            throw new IllegalArgumentException(field + " of " + n + " bytes but " + b.remaining() + " bytes of the body remain");
        }
        byte[] bytes = new byte[n];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Checks a header; returns the body length, or throws naming what is wrong.
     *
     * @throws IllegalArgumentException for a foreign or broken peer
     */
    static int bodyLength(ByteBuffer header) {
        int magic = header.getInt(0);
        if (magic != MAGIC) {
            throw new IllegalArgumentException("bad magic 0x" + Integer.toHexString(magic) + " (not an rdmaflux connection manager)");
        }
        if (header.get(4) != VERSION) {
            throw new IllegalArgumentException("unsupported version " + header.get(4) + " (this side speaks " + VERSION + ")");
        }
        int type = header.get(5);
        if (type < REQUEST || type > REJECT) {
            throw new IllegalArgumentException("unknown message type " + type);
        }
        int len = header.getInt(8);
        if (len < 0 || len > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("bad body length " + len + " (at most " + MAX_BODY_BYTES + ")");
        }
        return len;
    }

    static byte type(ByteBuffer header) {
        return header.get(5);
    }

    /** @throws IllegalArgumentException if the body is malformed */
    static CmParams decodeParams(ByteBuffer body) {
        try {
            int n = body.getShort() & 0xFFFF;
            if (n == 0) {
                throw new IllegalArgumentException("no QP endpoints");
            }
            if (n > body.remaining() / MIN_ENDPOINT_BYTES) {
                throw new IllegalArgumentException("endpoint count " + n + " but the remaining " + body.remaining()
                    + " bytes of the body hold at most " + body.remaining() / MIN_ENDPOINT_BYTES + " endpoints");
            }
            List<QpEndpoint> eps = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String fabric = getString(body, "fabric name of endpoint " + i);
                String host = getString(body, "host name of endpoint " + i);
                int port = body.getShort() & 0xFFFF;
                eps.add(new QpEndpoint(new PortAddress(fabric, host, port), body.getInt(), body.getInt(), body.getInt()));
            }
            int pd = body.getInt();
            if (pd < 0 || pd > ConnectionManager.MAX_PRIVATE_DATA_BYTES) {
                throw new IllegalArgumentException("private data length " + pd + " outside [0, " + ConnectionManager.MAX_PRIVATE_DATA_BYTES + "]");
            }
            if (pd > body.remaining()) {
                throw new IllegalArgumentException("private data length " + pd + " but " + body.remaining() + " bytes of the body remain");
            }
            byte[] data = new byte[pd];
            body.get(data);
            if (body.hasRemaining()) {
                throw new IllegalArgumentException(body.remaining() + " trailing bytes");
            }
            return new CmParams(eps, data);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated message", e);
        }
    }

    static String decodeReject(ByteBuffer body) {
        try {
            return getString(body, "reject reason");
        } catch (BufferUnderflowException | IllegalArgumentException e) {
            return "(malformed reject)";
        }
    }
}
