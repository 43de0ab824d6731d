package io.rdmaflux.core.stripe;

/**
 * A {@link StripePolicy} split a message wrongly: a negative stripe, bytes on a rail that is not usable,
 * or stripes that do not add up to the message. The message names the policy, the PSN and the split.
 * An {@link IllegalStateException}, so callers that expect one keep working; the connection catches this
 * type alone and aborts with "local scheduler error", letting any other exception a policy throws take
 * its own way.
 */
public final class StripeSplitException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public StripeSplitException(String message) {
        super(message);
    }
}
