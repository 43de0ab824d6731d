package io.rdmaflux.core.frame;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Encodes and decodes {@link FrameType#CLOSE} frames: the header, with {@link FrameHeader#FLAG_ABORT}
 * for an abort, followed by an optional UTF-8 reason. The PSN field holds the PSN the sender would
 * have given its next message, so the receiver knows how many messages to expect before the close
 * (seed 000 &sect;5.3: one FIN per subchannel).
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
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_REASON_BYTES);
        FrameHeader.write(b, offset, FrameType.CLOSE, abort ? FrameHeader.FLAG_ABORT : 0, streamId, nextPsn,
            credits, n, railMask);
        b.putBytes(offset + FrameHeader.LENGTH, text, 0, n);
        return FrameHeader.LENGTH + n;
    }

    /** The rails the CLOSE is sent on (bit r for rail r), 0 for every rail. */
    public static int railMask(DirectBuffer b, int offset) {
        return FrameHeader.messageLength(b, offset);
    }

    public static boolean isAbort(DirectBuffer b, int offset) {
        return (FrameHeader.flags(b, offset) & FrameHeader.FLAG_ABORT) != 0;
    }

    public static String reason(DirectBuffer b, int offset) {
        int n = FrameHeader.payloadLength(b, offset);
        byte[] text = new byte[n];
        b.getBytes(offset + FrameHeader.LENGTH, text);
        return new String(text, StandardCharsets.UTF_8);
    }
}
