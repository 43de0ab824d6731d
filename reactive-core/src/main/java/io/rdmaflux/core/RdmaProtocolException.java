package io.rdmaflux.core;

/** The peer broke the protocol, e.g. sent DATA for which it held no credit. The connection aborts. */
public class RdmaProtocolException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public RdmaProtocolException(String message) {
        super(Category.PROTOCOL, message);
    }
}
