package io.rdmaflux.ud.dr;

/**
 * One datagram received on {@code rail}: the first {@code length} bytes of {@code bytes}, which the receiver
 * of this record owns (a {@link DrLink} reads them at once and keeps nothing).
 */
public record Datagram(int rail, byte[] bytes, int length) {
    /**
     * @throws IllegalArgumentException if {@code length} is outside [0, bytes.length] or {@code rail} is negative
     */
    public Datagram {
        if (length < 0 || length > bytes.length) {
            throw new IllegalArgumentException("length in [0, " + bytes.length + "] required but it was " + length);
        }
        if (rail < 0) {
            throw new IllegalArgumentException("rail >= 0 required but it was " + rail);
        }
    }

    /** A whole array received on rail 0. */
    public static Datagram of(byte[] bytes) {
        return new Datagram(0, bytes, bytes.length);
    }
}
