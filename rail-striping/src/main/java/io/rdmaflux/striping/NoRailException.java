package io.rdmaflux.striping;

/**
 * Every rail of a virtual channel failed: nothing can be sent any more. The cause is the failure
 * of the last rail. Signalled through {@code onError}, never thrown on the data path.
 */
public final class NoRailException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NoRailException(String message, Throwable cause) {
        super(message, cause);
    }
}
