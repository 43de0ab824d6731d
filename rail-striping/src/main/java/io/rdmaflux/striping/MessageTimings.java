package io.rdmaflux.striping;

/**
 * Read-only view of the stripes of one completed message, handed to
 * {@link StripingPolicy#onMessageCompleted}. Valid only during that call (the scheduler reuses it).
 */
public interface MessageTimings {
    /** Message length in bytes. */
    long lengthBytes();

    /** Bytes of the message carried by {@code rail} (0 if the rail was not used). */
    long stripeBytes(int rail);

    /**
     * Delivery time t_i of the rail's stripe in ns: completion minus post (seed 000 §4.5), at least
     * 1 ns. Undefined when {@link #stripeBytes} is 0.
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
}
