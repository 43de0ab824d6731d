package io.rdmaflux.core.stripe;

/**
 * Read-only view of the stripes of one completed message, handed to
 * {@link StripePolicy#onMessageCompleted}. Valid only during that call (the {@link StripeEngine} reuses it).
 */
public interface MessageTimings {
    /** Message length in bytes. */
    long lengthBytes();

    /** Bytes of the message carried by {@code rail} (0 if the rail was not used). */
    long stripeBytes(int rail);

    /**
     * Delivery time t_i of the rail's stripe in ns, at least 1 ns; undefined when
     * {@link #stripeBytes} is 0. Seed 000 §4.5 takes completion minus start. When the stripe was
     * posted behind earlier stripes still outstanding on the same rail, the start counted here is
     * the previous completion on that rail instead of the post: with several messages in flight,
     * completion minus post measures the rail's backlog, not its bandwidth, and the feedback loop
     * oscillates (in virtual time with 16 messages in flight on 1 GB/s + 250 MB/s rails the
     * weights swung between 0.98 and 0.18). With one message in flight both are the same.
     */
    long deliveryTimeNs(int rail);

    /** Bit mask of the rails the message used. */
    long railsUsed();

    /** Completion time of the last stripe, in ns of the scheduler's clock. */
    long completedNs();

    /**
     * Whether a stripe of the message was re-sent after a rail failure; such timings describe
     * the failure, not the rails, and adaptive policies skip them.
     */
    boolean resent();

    /**
     * Whether a stripe's delivery time is unknown: its completion was seen at the same instant as
     * the previous completion on its rail while it was queued behind it (a batch of completions
     * found by one poll after the progress engine was held up, seed 000 §4.5 cases 2–3), so no
     * time can be attributed to it. Adaptive policies skip such messages.
     */
    default boolean censored() {
        return false;
    }
}
