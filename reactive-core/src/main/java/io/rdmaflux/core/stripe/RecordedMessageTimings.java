package io.rdmaflux.core.stripe;

import java.util.Arrays;

/**
 * The {@link MessageTimings} a scheduler records for one message while its stripes are posted and
 * complete, then hands to {@link StripePolicy#onMessageCompleted}; reset and reused for a later
 * message (no allocation per message). The {@link StripeEngine} keeps one per message entry, for every
 * user of the engine (the connection's rendezvous path, rail-striping's operators and one-sided rails).
 *
 * <p>Per rail: the stripe bytes the message put on it and the sum of its stripes' delivery times
 * (ns), each measured as seed 000 §4.5 says and as {@link MessageTimings#deliveryTimeNs} explains.
 *
 * <p><b>Thread-safety:</b> none; used by the scheduler's thread only.
 */
public class RecordedMessageTimings implements MessageTimings {
    private final long[] railBytes;
    private final long[] railDeliveryNs;
    private long lengthBytes;
    private long railsUsed;
    private long completedNs;
    private boolean resent;
    private boolean censored;

    /**
     * Timings for messages striped over up to {@code railCount} rails.
     *
     * @throws IllegalArgumentException if {@code railCount} is not in [1, 64]
     */
    public RecordedMessageTimings(int railCount) {
        if (railCount < 1 || railCount > 64) {
            throw new IllegalArgumentException("railCount must be in [1, 64] (a rail mask is a long) but it was " + railCount);
        }
        railBytes = new long[railCount];
        railDeliveryNs = new long[railCount];
    }

    /** Starts recording a new message of {@code lengthBytes} bytes: no rails, no times, not resent, not censored. */
    public void reset(long lengthBytes) {
        this.lengthBytes = lengthBytes;
        railsUsed = 0;
        completedNs = 0;
        resent = false;
        censored = false;
        Arrays.fill(railBytes, 0);
        Arrays.fill(railDeliveryNs, 0);
    }

    /** A stripe of {@code bytes} was posted on {@code rail}. */
    public void addStripe(int rail, long bytes) {
        railsUsed |= 1L << rail;
        railBytes[rail] += bytes;
    }

    /**
     * A stripe of {@code bytes} on {@code rail} failed and is re-sent elsewhere: its bytes no longer
     * count for the rail, and the message's timings describe the failure ({@link #resent()}).
     */
    public void stripeResent(int rail, long bytes) {
        railBytes[rail] -= bytes;
        resent = true;
    }

    /**
     * A stripe on {@code rail} completed after {@code deliveryNs}; a value of 0 or less (a
     * completion seen at the same instant as the previous one on its rail) adds nothing, and the
     * caller decides whether it makes the message {@linkplain #censor() censored}.
     */
    public void addDelivery(int rail, long deliveryNs) {
        railDeliveryNs[rail] += Math.max(0, deliveryNs);
    }

    /** No delivery time can be attributed to one of the message's stripes (see {@link MessageTimings#censored()}). */
    public void censor() {
        censored = true;
    }

    /** The message's last stripe completed at {@code completedNs} (scheduler clock). */
    public void completed(long completedNs) {
        this.completedNs = completedNs;
    }

    @Override
    public long lengthBytes() {
        return lengthBytes;
    }

    @Override
    public long stripeBytes(int rail) {
        return railBytes[rail];
    }

    @Override
    public long deliveryTimeNs(int rail) {
        return Math.max(1, railDeliveryNs[rail]);
    }

    @Override
    public long railsUsed() {
        return railsUsed;
    }

    @Override
    public long completedNs() {
        return completedNs;
    }

    @Override
    public boolean resent() {
        return resent;
    }

    @Override
    public boolean censored() {
        return censored;
    }
}
