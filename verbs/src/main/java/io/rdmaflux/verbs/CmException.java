package io.rdmaflux.verbs;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ConnectionManager#connect} that failed, with the {@link Reason}: whether nothing listened,
 * the path or the exchange broke, no reply came in time, or the listener said no. A caller that
 * retries (a server restarting at the same address) retries the {@linkplain Reason#retryable()
 * retryable} reasons and gives up on the others, which a retry cannot fix.
 *
 * <p>It is a {@link VerbsException}, so code that catches those keeps working; providers whose
 * connection manager does not classify its failures throw plain {@code VerbsException}s, which
 * callers should treat as not retryable.
 */
public class CmException extends VerbsException {
    private static final long serialVersionUID = 1L;

    /** Why a connect failed. */
    public enum Reason {
        /** Nothing listens at the address (TCP RST, or no listener on the in-JVM fabric): a server down or restarting. */
        REFUSED(true),
        /** No route to the host, or the host name does not resolve now. */
        UNREACHABLE(true),
        /** The exchange's connection broke before the reply (the listener's process died mid-exchange). */
        RESET(true),
        /** No reply within the connect timeout. */
        TIMED_OUT(true),
        /** The listener answered with a REJECT (configuration mismatch, node closing, no such channel kind...). */
        REJECTED(false),
        /** The reply could not be decoded: not an rdmaflux listener, or a protocol mismatch. */
        MALFORMED_REPLY(false),
        /** This side's connection manager is closed (or closed while the connect was pending). */
        CLOSED(false),
        /** The address is malformed or names another fabric. */
        BAD_ADDRESS(false);

        private final boolean retryable;

        Reason(boolean retryable) {
            this.retryable = retryable;
        }

        /** Whether a later attempt at the same address may succeed without any change on this side. */
        public boolean retryable() {
            return retryable;
        }
    }

    private final Reason reason;

    public CmException(Reason reason, String message) {
        this(reason, message, null);
    }

    public CmException(Reason reason, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
