package io.rdmaflux.core.frame;

import io.rdmaflux.core.RdmaException;

/** A received frame that does not decode (wrong version, unknown type, lengths that do not fit). */
public final class FrameFormatException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public FrameFormatException(String message) {
        super(Category.PROTOCOL, message, null, null);
    }
}
