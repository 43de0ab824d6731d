package io.rdmaflux.verbs.soft.net;

import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftFrame;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The wire layout of one soft-NIC frame on the IP fabric: a fixed 64-byte header followed by the
 * payload. A UDP datagram holds exactly one frame; a TCP stream is a sequence of frames, the
 * header's {@code frame length} delimiting them. The UCX provider carries the same header in each
 * active message's header. All fields are little-endian.
 *
 * <pre>
 *  0               4       5       6       7       8
 *  +---------------+-------+-------+-------+-------+
 *  | magic "RDFX"  |version| type  | flags |status |   flags bit 0: immediate present, bit 1: ICRC present
 *  +---------------+-------+-------+-------+-------+
 *  8  frame length (header + payload bytes)     u32
 * 12  source QPN                                u32
 * 16  destination QPN                           u32
 * 20  PSN (24 bits)                             u32
 * 24  immediate                                 u32
 * 28  rkey                                      u32
 * 32  Q_Key (UD); the ICRC when flags bit 1 is set (RC) u32
 * 36  length (payload bytes; READ request: bytes asked for) u32
 * 40  remote address                            u64
 * 48  sender clock at transmit, ns              u64
 * 56  delivery delay (deliverAt - sentAt), ns   u64
 * 64  payload ...
 * </pre>
 *
 * The ICRC ({@code SoftFrame.hasIcrc}) is carried only by the RC frames the soft NIC's fault model
 * corrupted, so the receiving NIC drops them as on the in-JVM fabric; an RC frame has no Q_Key, so it
 * rides in that field.
 *
 * <p>The receiver rebases the delivery time on its own clock ({@code arrival + delay}), as
 * {@link io.rdmaflux.verbs.soft.FrameTransport} asks of a transport between hosts.
 *
 * <p>{@link #validate} rejects, with a {@link Verdict}, a header a well-behaved sender never
 * writes: wrong magic or version, unknown type or status, a frame length that disagrees with the
 * header, or one above the receiver's limit. A bad frame is dropped and counted by the caller.
 *
 * <h2>Route release (TCP streams only)</h2>
 * One frame is the net fabric's own, not a soft-NIC frame: the <b>route release</b>, type byte
 * {@value #ROUTE_RELEASE_TYPE} (outside {@link FrameType}'s codes), status 0, frame length
 * {@value #HEADER_BYTES}, length 0, every other field 0 but the QPNs (the released pair, for
 * diagnostics only). A host sends it as the last frame of an RC stream whose local QP was destroyed,
 * then half-closes the stream: the peer closes its side without taking the end of the stream for a
 * dead host (see {@link NetTransport}, "Route release"). {@link #validate} refuses it
 * ({@link Verdict#BAD_TYPE}), so every path that does not look for it first (UDP datagrams, the UCX
 * provider's active messages) drops it as malformed; a stream reader checks {@link #isRouteRelease}
 * before {@link #validate}.
 *
 * <h2>Route renew (TCP streams only)</h2>
 * The net fabric's other frame of its own: the <b>route renew</b>, type byte {@value #ROUTE_RENEW_TYPE},
 * laid out as the route release, its QPNs the pair {@code (sender's QPN -> receiver's QPN)}. A host
 * writes it as the first frame of a TCP connection that replaces a stalled one of the same QP pair
 * (its RC retry timer expired); the receiver moves its own send half of the pair onto that connection
 * (see {@link NetTransport}, "Stalled streams"). Checked with {@link #isRouteRenew} before
 * {@link #validate}, which refuses it as it does the release.
 */
public final class NetFrameCodec {
    /** "RDFX" read as a little-endian int. */
    static final int MAGIC = 0x58464452;
    static final int VERSION = 1;
    /** Header bytes before the payload. */
    public static final int HEADER_BYTES = 64;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 4;
    static final int TYPE_OFFSET = 5;
    static final int FLAGS_OFFSET = 6;
    static final int STATUS_OFFSET = 7;
    static final int FRAME_LENGTH_OFFSET = 8;
    static final int SOURCE_QPN_OFFSET = 12;
    static final int DESTINATION_QPN_OFFSET = 16;
    static final int PSN_OFFSET = 20;
    static final int IMMEDIATE_OFFSET = 24;
    static final int RKEY_OFFSET = 28;
    static final int QKEY_OFFSET = 32;
    static final int LENGTH_OFFSET = 36;
    static final int REMOTE_ADDRESS_OFFSET = 40;
    static final int SENT_AT_OFFSET = 48;
    static final int DELAY_OFFSET = 56;

    /** The type byte of a route release (see the class Javadoc); no {@link FrameType} has this code. */
    static final int ROUTE_RELEASE_TYPE = 0xF0;
    /** The type byte of a route renew (see the class Javadoc); no {@link FrameType} has this code. */
    static final int ROUTE_RENEW_TYPE = 0xF1;

    private static final int FLAG_IMMEDIATE = 1;
    private static final int FLAG_ICRC = 2;
    private static final FrameType[] TYPES = FrameType.values();
    private static final WcStatus[] STATUSES = WcStatus.values();

    /** Why a header was rejected. */
    public enum Verdict {
        OK, BAD_MAGIC, BAD_VERSION, BAD_TYPE, BAD_LENGTH
    }

    private NetFrameCodec() {
    }

    /** Bytes the payload of {@code f} takes on the wire. */
    public static int payloadBytes(SoftFrame f) {
        return f.type == FrameType.RDMA_READ_REQUEST ? 0 : f.length;
    }

    /** Writes the header of {@code f} at {@code at} of {@code b} (little-endian buffer); the position is not moved. */
    public static void encodeHeader(SoftFrame f, ByteBuffer b, int at) {
        b.putInt(at + MAGIC_OFFSET, MAGIC);
        b.put(at + VERSION_OFFSET, (byte) VERSION);
        b.put(at + TYPE_OFFSET, (byte) f.type.ordinal());
        b.put(at + FLAGS_OFFSET, (byte) ((f.hasImmediate ? FLAG_IMMEDIATE : 0) | (f.hasIcrc ? FLAG_ICRC : 0)));
        b.put(at + STATUS_OFFSET, (byte) f.status.ordinal());
        b.putInt(at + FRAME_LENGTH_OFFSET, HEADER_BYTES + payloadBytes(f));
        b.putInt(at + SOURCE_QPN_OFFSET, f.sourceQpn);
        b.putInt(at + DESTINATION_QPN_OFFSET, f.destinationQpn);
        b.putInt(at + PSN_OFFSET, f.psn);
        b.putInt(at + IMMEDIATE_OFFSET, f.immediate);
        b.putInt(at + RKEY_OFFSET, f.rkey);
        b.putInt(at + QKEY_OFFSET, f.hasIcrc ? f.icrc : f.qkey);
        b.putInt(at + LENGTH_OFFSET, f.length);
        b.putLong(at + REMOTE_ADDRESS_OFFSET, f.remoteAddress);
        b.putLong(at + SENT_AT_OFFSET, f.sentAtNs);
        b.putLong(at + DELAY_OFFSET, Math.max(0, f.deliverAtNs - f.sentAtNs));
    }

    /**
     * Checks the header at {@code at} (at least {@link #HEADER_BYTES} readable bytes).
     *
     * @param maxFrameBytes the largest frame (header included) the receiver accepts
     */
    public static Verdict validate(ByteBuffer b, int at, int maxFrameBytes) {
        if (b.getInt(at + MAGIC_OFFSET) != MAGIC) {
            return Verdict.BAD_MAGIC;
        }
        if (b.get(at + VERSION_OFFSET) != VERSION) {
            return Verdict.BAD_VERSION;
        }
        int type = b.get(at + TYPE_OFFSET) & 0xFF;
        int status = b.get(at + STATUS_OFFSET) & 0xFF;
        if (type >= TYPES.length || status >= STATUSES.length) {
            return Verdict.BAD_TYPE;
        }
        int frameLength = b.getInt(at + FRAME_LENGTH_OFFSET);
        int length = b.getInt(at + LENGTH_OFFSET);
        int payload = TYPES[type] == FrameType.RDMA_READ_REQUEST ? 0 : length;
        if (length < 0 || frameLength < HEADER_BYTES || frameLength > maxFrameBytes || frameLength - HEADER_BYTES != payload) {
            return Verdict.BAD_LENGTH;
        }
        return Verdict.OK;
    }

    /** Writes a route release for the QP pair {@code (sourceQpn -> destinationQpn)} at {@code at} of {@code b}. */
    static void encodeRouteRelease(ByteBuffer b, int at, int sourceQpn, int destinationQpn) {
        encodeControl(b, at, ROUTE_RELEASE_TYPE, sourceQpn, destinationQpn);
    }

    /** Writes a route renew for the QP pair {@code (sourceQpn -> destinationQpn)} at {@code at} of {@code b}. */
    static void encodeRouteRenew(ByteBuffer b, int at, int sourceQpn, int destinationQpn) {
        encodeControl(b, at, ROUTE_RENEW_TYPE, sourceQpn, destinationQpn);
    }

    private static void encodeControl(ByteBuffer b, int at, int type, int sourceQpn, int destinationQpn) {
        for (int i = 0; i < HEADER_BYTES; i += 8) {
            b.putLong(at + i, 0L);
        }
        b.putInt(at + MAGIC_OFFSET, MAGIC);
        b.put(at + VERSION_OFFSET, (byte) VERSION);
        b.put(at + TYPE_OFFSET, (byte) type);
        b.putInt(at + FRAME_LENGTH_OFFSET, HEADER_BYTES);
        b.putInt(at + SOURCE_QPN_OFFSET, sourceQpn);
        b.putInt(at + DESTINATION_QPN_OFFSET, destinationQpn);
    }

    /**
     * Whether the header at {@code at} (at least {@link #HEADER_BYTES} readable bytes) is a well-formed
     * route release: magic, version, its type, status 0, frame length {@value #HEADER_BYTES}, length 0.
     * Anything else with its type byte is left to {@link #validate}, which refuses it.
     */
    static boolean isRouteRelease(ByteBuffer b, int at) {
        return isControl(b, at, ROUTE_RELEASE_TYPE);
    }

    /** As {@link #isRouteRelease}, for a route renew. */
    static boolean isRouteRenew(ByteBuffer b, int at) {
        return isControl(b, at, ROUTE_RENEW_TYPE);
    }

    private static boolean isControl(ByteBuffer b, int at, int type) {
        return (b.get(at + TYPE_OFFSET) & 0xFF) == type
            && b.getInt(at + MAGIC_OFFSET) == MAGIC
            && b.get(at + VERSION_OFFSET) == VERSION
            && b.get(at + STATUS_OFFSET) == 0
            && b.getInt(at + FRAME_LENGTH_OFFSET) == HEADER_BYTES
            && b.getInt(at + LENGTH_OFFSET) == 0;
    }

    /** Source QPN of a header. */
    static int sourceQpn(ByteBuffer b, int at) {
        return b.getInt(at + SOURCE_QPN_OFFSET);
    }

    /** Destination QPN of a header. */
    static int destinationQpn(ByteBuffer b, int at) {
        return b.getInt(at + DESTINATION_QPN_OFFSET);
    }

    /** Total frame bytes of a validated header. */
    public static int frameLength(ByteBuffer b, int at) {
        return b.getInt(at + FRAME_LENGTH_OFFSET);
    }

    /**
     * Fills the header fields of {@code f} from a validated header; the payload is not touched.
     *
     * @return the delivery delay, ns (to be added to the arrival time)
     */
    public static long decodeHeader(ByteBuffer b, int at, SoftFrame f) {
        f.type = TYPES[b.get(at + TYPE_OFFSET)];
        int flags = b.get(at + FLAGS_OFFSET);
        f.hasImmediate = (flags & FLAG_IMMEDIATE) != 0;
        f.hasIcrc = (flags & FLAG_ICRC) != 0;
        f.status = STATUSES[b.get(at + STATUS_OFFSET)];
        f.sourceQpn = b.getInt(at + SOURCE_QPN_OFFSET);
        f.destinationQpn = b.getInt(at + DESTINATION_QPN_OFFSET);
        f.psn = b.getInt(at + PSN_OFFSET);
        f.immediate = b.getInt(at + IMMEDIATE_OFFSET);
        f.rkey = b.getInt(at + RKEY_OFFSET);
        f.qkey = b.getInt(at + QKEY_OFFSET);
        f.icrc = f.qkey;
        f.length = b.getInt(at + LENGTH_OFFSET);
        f.remoteAddress = b.getLong(at + REMOTE_ADDRESS_OFFSET);
        f.sentAtNs = b.getLong(at + SENT_AT_OFFSET);
        long delay = b.getLong(at + DELAY_OFFSET);
        return delay < 0 ? 0 : delay;
    }

    /** A direct little-endian buffer. */
    public static ByteBuffer direct(int capacity) {
        return ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }
}
