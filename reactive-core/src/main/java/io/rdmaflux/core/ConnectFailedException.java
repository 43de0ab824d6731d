package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;

/**
 * A connect with a {@link ConnectRetry} ran out of attempts (or of its total timeout) while every
 * failure was retryable; {@link #getCause()} is the last attempt's error (e.g. a
 * {@link io.rdmaflux.verbs.CmException} with reason REFUSED: nothing came back at the address).
 */
public class ConnectFailedException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final transient PortAddress address;
    private final int attempts;
    private final long elapsedNs;

    public ConnectFailedException(PortAddress address, int attempts, long elapsedNs, Throwable lastError) {
        super(Category.TRANSPORT, "connect to " + address + " failed after " + attempts + " attempts over "
            + elapsedNs / 1_000_000 + " ms; last error: " + lastError.getMessage()
            + "; is the server at that address up? raise ConnectRetry.backoff(maxAttempts, ..) or totalTimeoutNs to wait longer",
            null, lastError);
        this.address = address;
        this.attempts = attempts;
        this.elapsedNs = elapsedNs;
    }

    public PortAddress address() {
        return address;
    }

    /** Attempts made, the first included. */
    public int attempts() {
        return attempts;
    }

    /** Node-clock time from the connect's subscription to the last failure, ns. */
    public long elapsedNs() {
        return elapsedNs;
    }
}
