package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Encodes and decodes {@link FrameType#CLOSE} frames: the header, with {@link FrameHeader#FLAG_ABORT}
 * for an abort, followed by an optional UTF-8 reason. The PSN field holds the PSN the sender would
 * have given its next message, so the receiver knows how many messages to expect before the close
 * (seed 000 &sect;5.3: one FIN per subchannel).
 *
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +---------------+---------------+-------------------------------+
 * |  version (3)  |   type (3)    |  flags: 0x4 ABORT, 0x20 FINAL |  0
 * +---------------+---------------+-------------------------------+
 * |                        stream id (0)                          |  4
 * +---------------------------------------------------------------+
 * |            next PSN (the sender's messages end before it)     |  8
 * +---------------------------------------------------------------+
 * |                 credit word (see FrameHeader)                 | 12
 * +---------------------------------------------------------------+
 * |                  payload length (reason bytes)                | 16
 * +---------------------------------------------------------------+
 * |     rail mask: the rails CLOSE (and FINAL) go on, 0 for all   | 20
 * +---------------------------------------------------------------+
 * |                 reason (UTF-8, at most 256 bytes) ...         | 24
 * </pre>
 *
 * <p>A graceful close takes three or four frames per rail: each side's CLOSE ("no more messages";
 * CREDIT and CTS frames may follow so the peer can finish its own messages), then each side's
 * {@link FrameHeader#FLAG_FINAL FINAL} once it has the peer's CLOSE (set on the CLOSE itself when the
 * peer's came first). FINAL is the last frame on its rail; a side frees its queue pairs when it sent
 * its FINAL, received the peer's and its own sends completed.
 */
public final class CloseFrameCodec {
    /** Longest reason carried, in bytes; longer reasons are cut. */
    public static final int MAX_REASON_BYTES = 256;

    private CloseFrameCodec() {
    }

    /** @return the frame length in bytes; the rail mask is 0 (the CLOSE goes on every rail) */
    public static int encode(MutableDirectBuffer b, int offset, int streamId, int nextPsn, int credits,
                             boolean abort, String reason) {
        return encode(b, offset, streamId, nextPsn, credits, abort, reason, 0);
    }

    /**
     * Encodes a CLOSE that the sender sends on the rails of {@code railMask} (bit r for rail r), carried
     * in the message length field: after a rail failed, the peer waits for CLOSE on these rails only.
     * 0 means every rail.
     *
     * @return the frame length in bytes
     */
    public static int encode(MutableDirectBuffer b, int offset, int streamId, int nextPsn, int credits,
                             boolean abort, String reason, int railMask) {
        return encode(b, offset, streamId, nextPsn, credits, abort, false, reason, railMask);
    }

    /**
     * Encodes a CLOSE that is the sender's last frame on its rail when {@code last} ({@link FrameHeader#FLAG_FINAL});
     * an abort is always the last frame, so it carries {@link FrameHeader#FLAG_ABORT} alone.
     *
     * @return the frame length in bytes
     */
    public static int encode(MutableDirectBuffer b, int offset, int streamId, int nextPsn, int credits,
                             boolean abort, boolean last, String reason, int railMask) {
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_REASON_BYTES);
        int flags = abort ? FrameHeader.FLAG_ABORT : last ? FrameHeader.FLAG_FINAL : 0;
        FrameHeader.write(b, offset, FrameType.CLOSE, flags, streamId, nextPsn, credits, n, railMask);
        b.putBytes(offset + FrameHeader.LENGTH, text, 0, n);
        return FrameHeader.LENGTH + n;
    }

    /** The rails the CLOSE is sent on (bit r for rail r), 0 for every rail. */
    public static int railMask(DirectBuffer b, int offset) {
        return FrameHeader.messageLength(b, offset);
    }

    /** Whether the CLOSE is its sender's last frame on this rail: {@link FrameHeader#FLAG_FINAL}, or an abort. */
    public static boolean isFinal(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & (FrameHeader.FLAG_FINAL | FrameHeader.FLAG_ABORT)) != 0;
    }

    public static boolean isAbort(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & FrameHeader.FLAG_ABORT) != 0;
    }

    /**
     * The reason text of a received CLOSE frame.
     *
     * @throws FrameFormatException if the payload length field is negative, above {@link #MAX_REASON_BYTES} or
     *     beyond the buffer (checked before anything is allocated for it)
     */
    public static String reason(DirectBuffer b, int offset) {
        int n = FrameHeader.payloadLength(b, offset);
        if (n < 0 || n > MAX_REASON_BYTES || (long) offset + FrameHeader.LENGTH + n > b.capacity()) {
            throw new FrameFormatException("CLOSE frame says payload length " + n + " for its reason; [0, " + MAX_REASON_BYTES
                + "] bytes inside the " + b.capacity() + "-byte buffer required");
        }
        byte[] text = new byte[n];
        b.getBytes(offset + FrameHeader.LENGTH, text);
        return new String(text, StandardCharsets.UTF_8);
    }
}
