package io.rdmaflux.core.frame;


import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The connection parameters each side puts in the connection manager's private data
 * ({@link io.rdmaflux.verbs.CmParams#privateData()}), little-endian:
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------------------------------------------------------+
 * |                      magic 'RDFX' (0x58464452)                |  0
 * +---------------+---------------+-------------------------------+
 * |    version    |     rails     |  rendezvous buffers (u16)     |  4
 * +---------------+---------------+-------------------------------+
 * |          receive buffer size in bytes (frame incl. header)    |  8
 * +---------------------------------------------------------------+
 * |            receive buffers posted per rail for DATA           | 12
 * +---------------------------------------------------------------+
 * |                   initial credits per rail                    | 16
 * +---------------------------------------------------------------+
 * |               largest message accepted, in bytes              | 20
 * +---------------+---------------+-------------------------------+
 * | kind of rail 0| kind of rail 1|  ... one byte per rail        | 24
 * +---------------+---------------+-------------------------------+
 * |   features    |                                                 24 + rails
 * +---------------+
 * </pre>
 *
 * <p>The kinds are what the connecting side asks for on each rail and
 * what the accepting side agreed to, as {@code io.rdmaflux.core.channel.ChannelKind#wireCode()} values
 * in [1, 255]. In a request, bit {@code 0x80} on a kind says the kind is the connecting node's default,
 * not asked for explicitly: an accepting node that does not offer it answers the kind's
 * {@code ChannelKind#fallback()} instead of refusing (the eager RDMA kind falls back to RC send/receive). A peer from before the kinds sends 24 bytes, which a connection manager may pad with
 * zeros (rdma_cm on InfiniBand delivers a fixed 56 bytes): a missing or zero kind byte means
 * {@link #RC_SEND_RECV}; bytes after the kinds are padding.
 *
 * <p>The <b>features</b> byte after the kinds: bit 0 ({@link #FEATURE_READ_RENDEZVOUS}) says the sender
 * of the record speaks the READ rendezvous (RTS_READ and READ_FIN frames); bits 1&ndash;2
 * ({@link #rendezvousModeCode()}) carry the connecting side's rendezvous mode (0 WRITE, 1 READ, 2
 * AUTO), which both directions use. A peer from before the byte sends none, or zero padding, which
 * means no READ rendezvous: the connection falls back to WRITE. A peer from before the byte ignores it
 * (it is padding to it).
 *
 * @param rails             how many subchannels (one per rail) the sender of this record opens, in [1, 255]
 * @param bufferBytes       receive buffer size in bytes; frames sent to this side must fit it
 * @param receiveBuffers    DATA receive buffers per rail
 * @param initialCredits    credits granted at connect time, per rail
 * @param maxMessageBytes   the largest message this side reassembles
 * @param rendezvousBuffers the sender's registered message buffers for rendezvous, in [0, 65535]; 0 means
 *                          it accepts no RTS, so large messages must reach it as DATA fragments
 * @param kindCodes         the channel kind code of each rail, {@code rails} entries in [1, 255]
 * @param features          the features byte, in [0, 255]
 */
public record HandshakeCodec(int rails, int bufferBytes, int receiveBuffers, int initialCredits, int maxMessageBytes,
                             int rendezvousBuffers, List<Integer> kindCodes, int features) {
    /** Features bit: this side speaks the READ rendezvous (RTS_READ, READ_FIN). */
    public static final int FEATURE_READ_RENDEZVOUS = 0x1;
    private static final int MODE_SHIFT = 1;
    private static final int MODE_MASK = 0x3;

    /** The kind code of the RC send/receive channel, what a handshake without kinds means. */
    public static final int RC_SEND_RECV = 1;
    public static final int MAGIC = 0x58464452;
    public static final int LENGTH = 24;
    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    public HandshakeCodec {
        if (rails < 1 || rails > 255) {
            throw new IllegalArgumentException("rails in [1, 255] required but it was " + rails);
        }
        if (bufferBytes <= FrameHeader.LENGTH) {
            throw new IllegalArgumentException("bufferBytes > " + FrameHeader.LENGTH + " required but it was " + bufferBytes);
        }
        if (receiveBuffers < 1 || initialCredits < 0 || initialCredits > receiveBuffers || maxMessageBytes < 0
            || rendezvousBuffers < 0 || rendezvousBuffers > 0xFFFF) {
            throw new IllegalArgumentException("handshake values out of range: receiveBuffers=" + receiveBuffers
                + ", initialCredits=" + initialCredits + ", maxMessageBytes=" + maxMessageBytes + ", rendezvousBuffers=" + rendezvousBuffers);
        }
        kindCodes = List.copyOf(kindCodes);
        if (kindCodes.size() != rails) {
            throw new IllegalArgumentException("one channel kind per rail required but " + kindCodes.size() + " were given for "
                + rails + " rails");
        }
        for (int code : kindCodes) {
            if (code < 1 || code > 255) {
                throw new IllegalArgumentException("channel kind codes in [1, 255] required but one was " + code);
            }
        }
        if (features < 0 || features > 255) {
            throw new IllegalArgumentException("features in [0, 255] required but it was " + features);
        }
    }

    /** A handshake without features (no READ rendezvous): what a peer from before the features byte sends. */
    public HandshakeCodec(int rails, int bufferBytes, int receiveBuffers, int initialCredits, int maxMessageBytes,
                          int rendezvousBuffers, List<Integer> kindCodes) {
        this(rails, bufferBytes, receiveBuffers, initialCredits, maxMessageBytes, rendezvousBuffers, kindCodes, 0);
    }

    /** The features byte for a side that speaks the READ rendezvous ({@code readRendezvous}) and asks for mode {@code modeCode} (0..3). */
    public static int features(boolean readRendezvous, int modeCode) {
        if (modeCode < 0 || modeCode > MODE_MASK) {
            throw new IllegalArgumentException("rendezvous mode code in [0, 3] required but it was " + modeCode);
        }
        return (readRendezvous ? FEATURE_READ_RENDEZVOUS : 0) | modeCode << MODE_SHIFT;
    }

    /** Whether the sender of this record speaks the READ rendezvous. */
    public boolean readRendezvous() {
        return (features & FEATURE_READ_RENDEZVOUS) != 0;
    }

    /** The rendezvous mode code the sender of this record asks for (the connecting side's; 0 WRITE). */
    public int rendezvousModeCode() {
        return features >>> MODE_SHIFT & MODE_MASK;
    }

    /** A handshake of RC send/receive rails. */
    public HandshakeCodec(int rails, int bufferBytes, int receiveBuffers, int initialCredits, int maxMessageBytes,
                          int rendezvousBuffers) {
        this(rails, bufferBytes, receiveBuffers, initialCredits, maxMessageBytes, rendezvousBuffers,
            Collections.nCopies(Math.max(0, rails), RC_SEND_RECV));
    }

    /** A handshake of a side that accepts no rendezvous. */
    public HandshakeCodec(int rails, int bufferBytes, int receiveBuffers, int initialCredits, int maxMessageBytes) {
        this(rails, bufferBytes, receiveBuffers, initialCredits, maxMessageBytes, 0);
    }

    public byte[] encode() {
        byte[] out = new byte[LENGTH + rails + 1];
        UnsafeBuffer b = new UnsafeBuffer(out);
        b.putInt(0, MAGIC, ORDER);
        b.putByte(4, (byte) FrameHeader.VERSION);
        b.putByte(5, (byte) rails);
        b.putShort(6, (short) rendezvousBuffers, ORDER);
        b.putInt(8, bufferBytes, ORDER);
        b.putInt(12, receiveBuffers, ORDER);
        b.putInt(16, initialCredits, ORDER);
        b.putInt(20, maxMessageBytes, ORDER);
        for (int r = 0; r < rails; r++) {
            b.putByte(LENGTH + r, (byte) (int) kindCodes.get(r));
        }
        b.putByte(LENGTH + rails, (byte) features);
        return out;
    }

    /** @throws FrameFormatException if the bytes are not an rdmaflux handshake of this version */
    public static HandshakeCodec decode(byte[] privateData) {
        if (privateData.length < LENGTH) {
            throw new FrameFormatException("connection private data of " + privateData.length
                + " bytes is not an rdmaflux handshake (" + LENGTH + " bytes); is the peer an rdmaflux node?");
        }
        UnsafeBuffer b = new UnsafeBuffer(privateData);
        int magic = b.getInt(0, ORDER);
        if (magic != MAGIC) {
            throw new FrameFormatException("connection private data starts with 0x" + Integer.toHexString(magic)
                + ", not the rdmaflux magic 0x" + Integer.toHexString(MAGIC) + "; is the peer an rdmaflux node?");
        }
        int version = b.getByte(4) & 0xFF;
        if (version != FrameHeader.VERSION) {
            throw new FrameFormatException("peer speaks rdmaflux protocol version " + version + ", this node " + FrameHeader.VERSION);
        }
        int rails = b.getByte(5) & 0xFF;
        List<Integer> kinds = new ArrayList<>(rails);
        if (privateData.length == LENGTH) {
            kinds.addAll(Collections.nCopies(rails, RC_SEND_RECV));
        } else if (privateData.length < LENGTH + rails) {
            throw new FrameFormatException("peer handshake of " + privateData.length + " bytes names " + rails
                + " rails but not the channel kind of each (" + (LENGTH + rails) + " bytes expected)");
        }
        try {
            for (int r = 0; kinds.size() < rails; r++) {
                int code = b.getByte(LENGTH + r) & 0xFF;
                // an old peer's 24 bytes padded with zeros by the connection manager: RC send/receive
                kinds.add(code == 0 ? RC_SEND_RECV : code);
            }
            // no features byte (a peer from before it), or zero padding: no READ rendezvous
            int features = privateData.length > LENGTH + rails ? b.getByte(LENGTH + rails) & 0xFF : 0;
            return new HandshakeCodec(rails, b.getInt(8, ORDER), b.getInt(12, ORDER), b.getInt(16, ORDER),
                b.getInt(20, ORDER), b.getShort(6, ORDER) & 0xFFFF, kinds, features);
        } catch (IllegalArgumentException e) {
            throw new FrameFormatException("peer handshake is invalid: " + e.getMessage());
        }
    }
}
