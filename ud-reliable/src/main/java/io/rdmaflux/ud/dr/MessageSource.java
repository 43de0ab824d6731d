package io.rdmaflux.ud.dr;

import org.agrona.MutableDirectBuffer;

/**
 * A message DR fragments without copying it first ({@link DrEndpoint#offer(MessageSource)}): its bytes are read when
 * each VFRAG is made, so they must stay unchanged until the message's last VFRAG was sent (an RC work request's
 * buffer does: it is the application's until the request completes, which DR's acknowledgement decides).
 * A VFRAG that must be sent again is resent from DR's own copy, never read from the source again.
 *
 * <p><b>Concurrency:</b> read on the thread that drives the {@link DrEndpoint}.
 */
public interface MessageSource {
    /** The message's length, bytes. */
    int length();

    /** Copies {@code length} bytes from {@code offset} of the message to {@code dst} at {@code dstOffset}. */
    void copyTo(int offset, MutableDirectBuffer dst, int dstOffset, int length);

    /** A source over a whole array (the array is kept, not copied). */
    static MessageSource of(byte[] message) {
        return new MessageSource() {
            @Override
            public int length() {
                return message.length;
            }

            @Override
            public void copyTo(int offset, MutableDirectBuffer dst, int dstOffset, int length) {
                dst.putBytes(dstOffset, message, offset, length);
            }
        };
    }
}
