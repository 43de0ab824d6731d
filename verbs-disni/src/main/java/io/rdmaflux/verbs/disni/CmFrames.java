package io.rdmaflux.verbs.disni;

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
 * The frames of {@link DisniConnectionManager}'s TCP exchange, big-endian:
 *
 * <pre>
 *  0      4      8    9
 * +------+------+----+------------------------------------------------------------+
 * |magic |length|type| body (length bytes)                                        |
 * +------+------+----+------------------------------------------------------------+
 * REQUEST(1), ACCEPT(2): u16 n, n × { u16+utf8 fabric, u16+utf8 host, u16 port, i32 qpn, i32 start PSN,
 *                        i32 MTU }, i32 m, m bytes of private data
 * REJECT(3):             u16+utf8 reason
 * </pre>
 */
final class CmFrames {
    static final int MAGIC = 0x44434D31; // "DCM1"
    static final int HEADER_BYTES = 9;
    static final int MAX_BODY_BYTES = 1 << 16;
    static final byte REQUEST = 1;
    static final byte ACCEPT = 2;
    static final byte REJECT = 3;

    private CmFrames() {
    }

    static ByteBuffer params(byte type, CmParams p) {
        ByteBuffer body = ByteBuffer.allocate(6 + p.privateData().length + p.endpoints().size() * 600);
        body.putShort((short) p.endpoints().size());
        for (QpEndpoint e : p.endpoints()) {
            string(body, e.address().fabric());
            string(body, e.address().host());
            body.putShort((short) e.address().port());
            body.putInt(e.qpn()).putInt(e.startPsn()).putInt(e.mtuBytes());
        }
        body.putInt(p.privateData().length).put(p.privateData());
        return frame(type, body.flip());
    }

    static ByteBuffer reject(String reason) {
        ByteBuffer body = ByteBuffer.allocate(2 + 3 * 1000);
        string(body, reason.length() > 1000 ? reason.substring(0, 1000) : reason);
        return frame(REJECT, body.flip());
    }

    private static ByteBuffer frame(byte type, ByteBuffer body) {
        ByteBuffer f = ByteBuffer.allocate(HEADER_BYTES + body.remaining());
        f.putInt(MAGIC).putInt(body.remaining()).put(type).put(body);
        return f.flip();
    }

    private static void string(ByteBuffer b, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        b.putShort((short) bytes.length).put(bytes);
    }

    private static String string(ByteBuffer b) {
        byte[] bytes = new byte[b.getShort() & 0xFFFF];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * The body length a header announces.
     *
     * @throws IllegalArgumentException naming the bad magic or length
     */
    static int bodyLength(ByteBuffer header) {
        int magic = header.getInt(0);
        if (magic != MAGIC) {
            throw new IllegalArgumentException("not a disni CM frame (magic 0x" + Integer.toHexString(magic) + ")");
        }
        int length = header.getInt(4);
        if (length < 0 || length > MAX_BODY_BYTES) {
            throw new IllegalArgumentException("CM frame body of " + length + " bytes (at most " + MAX_BODY_BYTES + ")");
        }
        return length;
    }

    static byte type(ByteBuffer header) {
        return header.get(8);
    }

    /** @throws IllegalArgumentException when the body is malformed */
    static CmParams decodeParams(ByteBuffer body) {
        try {
            int n = body.getShort() & 0xFFFF;
            List<QpEndpoint> endpoints = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String fabric = string(body);
                String host = string(body);
                int port = body.getShort() & 0xFFFF;
                endpoints.add(new QpEndpoint(new PortAddress(fabric, host, port), body.getInt(), body.getInt(), body.getInt()));
            }
            int m = body.getInt();
            if (m < 0 || m > ConnectionManager.MAX_PRIVATE_DATA_BYTES) {
                throw new IllegalArgumentException("private data of " + m + " bytes");
            }
            byte[] data = new byte[m];
            body.get(data);
            return new CmParams(endpoints, data);
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("CM frame body ends early", e);
        }
    }

    static String decodeReject(ByteBuffer body) {
        try {
            return string(body);
        } catch (BufferUnderflowException e) {
            return "(malformed reject)";
        }
    }
}
