package io.rdmaflux.core.internal.credit;

/**
 * Send-side credit accounting of one connection, a pure state machine: how many credits the peer
 * granted (one per DATA frame it can receive) and how many messages may be requested from the
 * user's publisher.
 *
 * <p>The sender requests from the publisher only as many messages as it holds credits for plus a
 * small fixed queue: {@code outstanding <= credits + queueCapacity} after every
 * {@link #toRequest()}, where {@code outstanding} counts messages requested and not yet
 * transmitted. So a stalled receiver stops the publisher with at most {@code credits + queue}
 * messages taken from it, whatever the downstream demand, with nothing dropped and no thread
 * blocked (seed 001 &sect;3.1).
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by the progress thread.
 */
public final class SendCredits {
    private final int queueCapacity;
    private long credits;
    private long outstanding;
    private long maxOutstandingSeen;
    private int lastGrantTotal;

    /** @param queueCapacity messages taken from the publisher beyond the credits held, &gt; 0 */
    public SendCredits(int queueCapacity) {
        if (queueCapacity <= 0) {
            throw new IllegalArgumentException("queueCapacity > 0 required but it was " + queueCapacity);
        }
        this.queueCapacity = queueCapacity;
    }

    /** The peer granted {@code n} more credits. */
    public void onGrant(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("granted credits >= 0 required but it was " + n);
        }
        credits += n;
    }

    /**
     * A frame carried the peer's running total of message credits granted, modulo 2^15
     * ({@link MessageCredits#takeWireTotal()}): adds what is new. A total older than one already seen
     * (frames on different rails overtake each other) adds nothing.
     */
    public void onGrantTotal(int total15) {
        int delta = ((total15 - lastGrantTotal) << 17) >> 17;
        if (delta > 0) {
            credits += delta;
            lastGrantTotal = total15 & 0x7FFF;
        }
    }

    /** Whether {@code n} credits are available (a message of {@code n} fragments, or its next fragment). */
    public boolean hasCredits(int n) {
        return credits >= n;
    }

    /** Uses one credit for one DATA frame. @throws IllegalStateException when none is held */
    public void consume() {
        if (credits <= 0) {
            throw new IllegalStateException("no send credit to consume");
        }
        credits--;
    }

    /**
     * How many more messages to request from the publisher now; the caller must then call
     * {@code request(n)} when the result is positive. Counts them as outstanding.
     */
    public long toRequest() {
        long n = credits + queueCapacity - outstanding;
        if (n <= 0) {
            return 0;
        }
        outstanding += n;
        if (outstanding > maxOutstandingSeen) {
            maxOutstandingSeen = outstanding;
        }
        return n;
    }

    /**
     * Like {@link #toRequest()} for credits counted elsewhere (a connection of several subchannels
     * sums theirs): how many more messages to request when {@code creditsHeld} credits are held.
     */
    public long toRequest(long creditsHeld) {
        long n = creditsHeld + queueCapacity - outstanding;
        if (n <= 0) {
            return 0;
        }
        outstanding += n;
        if (outstanding > maxOutstandingSeen) {
            maxOutstandingSeen = outstanding;
        }
        return n;
    }

    /** One requested message was taken off the send queue for transmission (or failed and was dropped from it). */
    public void onTaken() {
        if (outstanding <= 0) {
            throw new IllegalStateException("message taken but none was requested");
        }
        outstanding--;
    }

    /**
     * {@code n} messages taken from the publisher and sent, one message credit each: {@link #onTaken()}
     * and {@link #consume()} {@code n} times (a packed frame's messages at once).
     *
     * @throws IllegalArgumentException if {@code n} is negative
     * @throws IllegalStateException if fewer than {@code n} credits are held or fewer than {@code n} messages were requested
     */
    public void take(int n) {
        if (n < 0) {
            throw new IllegalArgumentException("n >= 0 required but it was " + n);
        }
        if (credits < n || outstanding < n) {
            throw new IllegalStateException("taking " + n + " messages with " + credits + " credits held and "
                + outstanding + " requested");
        }
        credits -= n;
        outstanding -= n;
    }

    /** The publisher completed or the send ended: forget unfulfilled requests. */
    public void resetOutstanding() {
        outstanding = 0;
    }

    public long credits() {
        return credits;
    }

    public long outstanding() {
        return outstanding;
    }

    public int queueCapacity() {
        return queueCapacity;
    }

    /** Highest {@link #outstanding()} ever reached: requested and not yet transmitted. */
    public long maxOutstandingSeen() {
        return maxOutstandingSeen;
    }

    @Override
    public String toString() {
        return "SendCredits{credits=" + credits + ", outstanding=" + outstanding + ", queue=" + queueCapacity + "}";
    }
}
