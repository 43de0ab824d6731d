package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;

/**
 * The 24-byte header at the start of every frame. All fields are little-endian.
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |    version    |     type      |             flags             |  0
 * +---------------+---------------+-------------------------------+
 * |                          stream id                            |  4
 * +---------------------------------------------------------------+
 * |                     PSN (message sequence)                    |  8
 * +---------------------------------------------------------------+
 * |  buffer credits (rail, u16)   | msg credit total (conn, u15)  | 12
 * +-------------------------------+-------------------------------+
 * |               payload length (bytes in this frame)            | 16
 * +---------------------------------------------------------------+
 * | message length (bytes of the whole message, DATA; count, PACKED) | 20
 * +---------------------------------------------------------------+
 * |                      payload ...                              | 24
 * </pre>
 *
 * <p>The credit word is piggybacked on every frame: the credits the frame's sender grants its peer
 * (seed 001 &sect;3.1, &sect;4.4), in two halves (see {@code credit.MessageCredits} for why):
 * new buffer credits of the subchannel the frame travels on (low 16 bits, at most
 * {@link #MAX_BUFFER_CREDITS_PER_FRAME}; larger grants travel over several frames) and the running
 * total of message credits the connection granted, modulo 2^15 (high bits, so the word stays a
 * non-negative int): a total rather than an increment because message credits travel on any rail,
 * and a frame lost with a failed rail must not lose them. {@code PSN} numbers the messages
 * of a (virtual) channel; every fragment of one message carries the message's PSN, so a striping
 * layer can restore order across subchannels (seed 000 &sect;5.2). The stream id names the
 * virtual channel inside a connection (0 for the single-rail channel).
 *
 * <p>This class holds the offsets and the accessors shared by the codecs; it keeps no state.
 */
public final class FrameHeader {
    /**
     * The protocol version this code writes and accepts (the handshake carries it too, so peers of
     * different versions refuse each other at connect time with a clear error instead of misreading
     * frames):
     * <ol>
     *   <li>DATA, CREDIT and CLOSE frames; one credit count per frame;</li>
     *   <li>adds the rendezvous frames RTS, CTS and FIN, RAIL_DOWN, packed DATA
     *       ({@link #FLAG_PACKED}, up to {@link DataFrameCodec#MAX_PACKED_MESSAGES} messages), and splits the
     *       credit word into per-rail buffer credits and the connection's running message-credit total;</li>
     *   <li>adds {@link #FLAG_INBOUND_CLOSED} on CREDIT (the receiver will take no more messages, so the
     *       sender fails what it has not sent instead of waiting for credit) and {@link #FLAG_FINAL} on
     *       CLOSE (the last frame on its rail): control frames now flow after a graceful CLOSE until the
     *       peer's CLOSE arrived, and a graceful close ends with a FINAL each way. A version-2 peer sends
     *       no FINAL, so a close with it would never end: the versions refuse each other.</li>
     * </ol>
     */
    public static final int VERSION = 3;

    public static final int VERSION_OFFSET = 0;
    public static final int TYPE_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int STREAM_ID_OFFSET = 4;
    public static final int PSN_OFFSET = 8;
    public static final int CREDITS_OFFSET = 12;
    public static final int PAYLOAD_LENGTH_OFFSET = 16;
    public static final int MESSAGE_LENGTH_OFFSET = 20;
    /** Header length in bytes; the payload starts here. */
    public static final int LENGTH = 24;

    /** DATA: this fragment starts a message. */
    public static final int FLAG_FIRST = 0x1;
    /** DATA: this fragment ends a message. */
    public static final int FLAG_LAST = 0x2;
    /** CLOSE: the sender aborts instead of closing gracefully. */
    public static final int FLAG_ABORT = 0x4;
    /** DATA: the payload packs several whole messages (see {@code DataFrameCodec}); the message length field holds their count. */
    public static final int FLAG_PACKED = 0x8;
    /**
     * CREDIT: the sender of the frame closed its inbound side (its application cancelled {@code receive()},
     * or closed the connection without subscribing to it): it grants no more message credits and drops
     * what still arrives, so the peer fails the messages it has not sent rather than wait for credit.
     */
    public static final int FLAG_INBOUND_CLOSED = 0x10;
    /**
     * CLOSE: the last frame the sender sends on this rail. A graceful CLOSE without it means "no more
     * messages": control frames (CREDIT, CTS) still follow, so the peer can finish what it is sending. The
     * sender sets it once it has the peer's CLOSE too (on the CLOSE itself if the peer's came first, else
     * on a second CLOSE frame); each side frees its queue pairs only after the peer's FINAL arrived, so no
     * frame is ever sent to a destroyed queue pair. An abort CLOSE ({@link #FLAG_ABORT}) is always the
     * last frame and does not carry this flag too.
     */
    public static final int FLAG_FINAL = 0x20;

    /** Most buffer credits one frame grants. */
    public static final int MAX_BUFFER_CREDITS_PER_FRAME = 0xFFFF;
    /** Most message credits one frame grants. */
    public static final int MAX_MESSAGE_CREDITS_PER_FRAME = 0x7FFF;

    static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private FrameHeader() {
    }

    static void write(MutableDirectBuffer b, int offset, FrameType type, int flags, int streamId, int psn,
                      int credits, int payloadLength, int messageLength) {
        b.putByte(offset + VERSION_OFFSET, (byte) VERSION);
        b.putByte(offset + TYPE_OFFSET, (byte) type.code());
        b.putShort(offset + FLAGS_OFFSET, (short) flags, ORDER);
        b.putInt(offset + STREAM_ID_OFFSET, streamId, ORDER);
        b.putInt(offset + PSN_OFFSET, psn, ORDER);
        b.putInt(offset + CREDITS_OFFSET, credits, ORDER);
        b.putInt(offset + PAYLOAD_LENGTH_OFFSET, payloadLength, ORDER);
        b.putInt(offset + MESSAGE_LENGTH_OFFSET, messageLength, ORDER);
    }

    /**
     * Checks the version and the lengths of a frame of {@code frameLength} received bytes.
     *
     * @return the frame type
     * @throws FrameFormatException naming the field at fault
     */
    public static FrameType validate(DirectBuffer b, int offset, int frameLength) {
        if (frameLength < LENGTH) {
            throw new FrameFormatException("frame of " + frameLength + " bytes is shorter than the " + LENGTH + "-byte header");
        }
        int version = b.getByte(offset + VERSION_OFFSET) & 0xFF;
        if (version != VERSION) {
            throw new FrameFormatException("frame version " + version + " is not the supported version " + VERSION);
        }
        FrameType type = FrameType.fromCode(b.getByte(offset + TYPE_OFFSET) & 0xFF);
        int payload = payloadLength(b, offset);
        if (payload < 0 || payload != frameLength - LENGTH) {
            throw new FrameFormatException(type + " frame says payload length " + payload + " but "
                + (frameLength - LENGTH) + " payload bytes arrived");
        }
        int credits = credits(b, offset);
        if (credits < 0) {
            throw new FrameFormatException(type + " frame grants a negative credit count " + credits);
        }
        return type;
    }

    public static FrameType type(DirectBuffer b, int offset) {
        return FrameType.fromCode(b.getByte(offset + TYPE_OFFSET) & 0xFF);
    }

    public static int flags(DirectBuffer b, int offset) {
        return b.getShort(offset + FLAGS_OFFSET, ORDER) & 0xFFFF;
    }

    public static int streamId(DirectBuffer b, int offset) {
        return b.getInt(offset + STREAM_ID_OFFSET, ORDER);
    }

    public static int psn(DirectBuffer b, int offset) {
        return b.getInt(offset + PSN_OFFSET, ORDER);
    }

    /** The raw credit word (both halves); see {@link #bufferCredits} and {@link #messageCredits}. */
    public static int credits(DirectBuffer b, int offset) {
        return b.getInt(offset + CREDITS_OFFSET, ORDER);
    }

    /** New buffer credits of the subchannel this frame travels on. */
    public static int bufferCredits(DirectBuffer b, int offset) {
        return b.getInt(offset + CREDITS_OFFSET, ORDER) & 0xFFFF;
    }

    /** The running total of message credits the connection granted, modulo 2^15 (see {@code credit.MessageCredits#takeWireTotal}). */
    public static int messageCredits(DirectBuffer b, int offset) {
        return b.getInt(offset + CREDITS_OFFSET, ORDER) >>> 16;
    }

    /**
     * Packs the credit word.
     *
     * @throws IllegalArgumentException if a half is out of range, naming it
     */
    public static int packCredits(int bufferCredits, int messageCredits) {
        if (bufferCredits < 0 || bufferCredits > MAX_BUFFER_CREDITS_PER_FRAME) {
            throw new IllegalArgumentException("bufferCredits in [0, " + MAX_BUFFER_CREDITS_PER_FRAME + "] required but it was " + bufferCredits);
        }
        if (messageCredits < 0 || messageCredits > MAX_MESSAGE_CREDITS_PER_FRAME) {
            throw new IllegalArgumentException("messageCredits in [0, " + MAX_MESSAGE_CREDITS_PER_FRAME + "] required but it was " + messageCredits);
        }
        return bufferCredits | (messageCredits << 16);
    }

    /** Overwrites the credit field of an encoded frame (piggybacking just before posting). */
    public static void credits(MutableDirectBuffer b, int offset, int credits) {
        b.putInt(offset + CREDITS_OFFSET, credits, ORDER);
    }

    public static int payloadLength(DirectBuffer b, int offset) {
        return b.getInt(offset + PAYLOAD_LENGTH_OFFSET, ORDER);
    }

    public static int messageLength(DirectBuffer b, int offset) {
        return b.getInt(offset + MESSAGE_LENGTH_OFFSET, ORDER);
    }

    /** For the encoders: a message length field holds a length in bytes, never negative. */
    static void requireMessageLength(int messageLength) {
        if (messageLength < 0) {
            throw new IllegalArgumentException("messageLength >= 0 required but it was " + messageLength);
        }
    }

    /**
     * For the decoders of fixed-layout frames: the payload is exactly {@code expected} bytes.
     *
     * @throws FrameFormatException naming the frame type, the length found and the layout's
     */
    static void requirePayload(DirectBuffer b, int offset, FrameType type, int expected) {
        int payload = payloadLength(b, offset);
        if (payload != expected) {
            throw new FrameFormatException(type + " frame carries " + payload + " payload bytes but its layout has " + expected);
        }
    }
}
