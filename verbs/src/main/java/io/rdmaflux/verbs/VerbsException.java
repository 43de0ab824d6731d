package io.rdmaflux.verbs;

import org.jspecify.annotations.Nullable;

/**
 * Raised by setup-path verbs calls (opening a device, registering memory, creating or modifying a
 * queue pair, posting on a queue pair in the wrong state, use after close). The message names the
 * offending value and the fix. Data-path failures are reported as {@link WorkCompletion}s with an
 * error {@link WcStatus} instead.
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final @Nullable WcStatus status;

    public VerbsException(String message) {
        this(message, null, null);
    }

    public VerbsException(String message, @Nullable Throwable cause) {
        this(message, null, cause);
    }

    public VerbsException(String message, @Nullable WcStatus status, @Nullable Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    /** The verbs completion status this error corresponds to, or {@code null} for setup errors. */
    public @Nullable WcStatus status() {
        return status;
    }
}
