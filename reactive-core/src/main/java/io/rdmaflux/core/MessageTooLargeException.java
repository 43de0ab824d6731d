package io.rdmaflux.core;

/**
 * A message passed to {@code send} is larger than the maximum message size negotiated for the
 * connection. Only that {@code send} fails; the connection stays usable.
 */
public class MessageTooLargeException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final long lengthBytes;
    private final long maxMessageBytes;

    public MessageTooLargeException(long lengthBytes, long maxMessageBytes) {
        super(Category.MESSAGE_SIZE, "message of " + lengthBytes + " bytes exceeds the connection's maximum message size of "
            + maxMessageBytes + " bytes; split it or raise maxMessageBytes on both nodes (RdmaNode.Builder.maxMessageBytes)");
        this.lengthBytes = lengthBytes;
        this.maxMessageBytes = maxMessageBytes;
    }

    public long lengthBytes() {
        return lengthBytes;
    }

    public long maxMessageBytes() {
        return maxMessageBytes;
    }
}
