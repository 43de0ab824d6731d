package io.rdmaflux.core.onesided;

import io.rdmaflux.core.RdmaException;

/**
 * A one-sided operation was refused before anything was posted: it named remote memory it may not
 * touch. The message names the region, the range and the fix; {@link #reason()} says which check
 * failed. Nothing was written or read, and the connection stays usable.
 */
public final class RemoteAccessException extends RdmaException {
    private static final long serialVersionUID = 1L;

    /** Which check refused the operation. */
    public enum Reason {
        /** The range is outside the region (remote or local). */
        BOUNDS,
        /** The region was exposed without the right the operation needs (WRITE for a put, READ for a get, ATOMIC for an atomic). */
        RIGHTS,
        /** The region was revoked by its owner or released by this side. */
        REVOKED,
        /** The region is not one the peer exposed on this connection (this side's own, or another connection's). */
        NOT_REMOTE,
        /** An atomic named a word that is not 8-byte aligned. */
        ALIGNMENT
    }

    private final Reason reason;

    public RemoteAccessException(Reason reason, String message) {
        super(Category.REMOTE_ACCESS, message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
