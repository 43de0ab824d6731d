package io.rdmaflux.core;

/**
 * A reference-counted {@link RdmaMessage} was released more often than retained, or used after its
 * count reached 0 (as Netty's exception of the same name). The message names the message.
 */
public class IllegalReferenceCountException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public IllegalReferenceCountException(String message) {
        super(Category.REFERENCE_COUNT, message);
    }
}
