package io.rdmaflux.core.frame;

import org.agrona.MutableDirectBuffer;

/**
 * Writes one control frame into a send slot that the channel owns: what a layer above the channel (the
 * one-sided engine) hands to {@code Channel.sendOneSidedControl} so that it never touches the channel's
 * send memory itself. The channel passes the credit word it piggybacks.
 *
 * <p><b>Concurrency:</b> called once, on the progress thread, during the send call.
 */
@FunctionalInterface
public interface ControlFrameEncoder {
    /**
     * Encodes the frame at {@code offset} of {@code b}.
     *
     * @param credits the credit word to piggyback (see {@link FrameHeader})
     * @return the frame length in bytes, at most the channel's frame size
     */
    int encode(MutableDirectBuffer b, int offset, int credits);
}
