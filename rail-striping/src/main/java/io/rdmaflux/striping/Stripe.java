package io.rdmaflux.striping;

/**
 * One unit of work the {@link CommunicationScheduler} hands to a subchannel: a whole multiplexed
 * message, or one stripe of a striped message (bytes {@code [offset, offset + length)} of it).
 *
 * <p>Instances are pooled: a subchannel must copy what it needs during
 * {@link CommunicationScheduler.StripeSink#post} and must not keep the reference, which the
 * scheduler reuses once the stripe's completion has been reported.
 *
 * @param <T> the message type
 */
public final class Stripe<T> {
    long stripeId;
    long psn;
    int rail;
    long offsetBytes;
    long lengthBytes;
    long messageLengthBytes;
    long postedNs;
    boolean railIdleAtPost;
    boolean resent;
    boolean striped;
    /** The scheduler while the stripe is in flight, else null. */
    @org.jspecify.annotations.Nullable CommunicationScheduler<T> owner;
    /** The message's entry in the scheduler's {@code StripeEngine}, and the stripe's slot there. */
    int entry;
    int slot;

    Stripe() {
    }

    /** Unique id of this stripe within its scheduler; use it as the work request id. */
    public long stripeId() {
        return stripeId;
    }

    /** PSN of the message (seed 000 §5.2): the receiver restores message order from it. */
    public long psn() {
        return psn;
    }

    /** Rail (subchannel index) the stripe is posted on. */
    public int rail() {
        return rail;
    }

    /** Offset of the stripe within its message, in bytes. */
    public long offsetBytes() {
        return offsetBytes;
    }

    /** Length of the stripe in bytes. */
    public long lengthBytes() {
        return lengthBytes;
    }

    /** Length of the whole message in bytes. */
    public long messageLengthBytes() {
        return messageLengthBytes;
    }

    /** Whether the message was striped (false: multiplexed whole). */
    public boolean striped() {
        return striped;
    }

    /** Whether this stripe re-sends bytes of a failed rail. */
    public boolean resent() {
        return resent;
    }

    /** Scheduler clock time when the stripe was posted, in ns. */
    public long postedNs() {
        return postedNs;
    }

    /** The message this stripe belongs to. */
    public T message() {
        CommunicationScheduler<T> o = owner;
        T m = o == null ? null : o.messageAt(entry);
        if (m == null) {
            throw new IllegalStateException("stripe " + stripeId + " is not in flight; a Stripe is only valid during post()");
        }
        return m;
    }

    @Override
    public String toString() {
        return "Stripe{id=" + stripeId + ", psn=" + psn + ", rail=" + rail + ", [" + offsetBytes + ", "
            + (offsetBytes + lengthBytes) + ") of " + messageLengthBytes + (resent ? ", resent" : "") + "}";
    }
}
