package io.rdmaflux.core.credit;

/**
 * Receive-side credit accounting of one subchannel, a pure state machine (no I/O, no clock).
 *
 * <p>Credits granted to the peer = DATA receive buffers that are free <b>and</b> covered by
 * outstanding subscriber demand (seed 001 &sect;3.1: credit-based flow control keeps receives posted
 * for every message; &sect;4.4: a buffer frees when the application releases it, out of order). In
 * numbers, after every event the peer may hold at most
 * {@code min(capacity - held, demand - undelivered)} credits, where {@code held} counts buffers
 * holding data the application has not released, {@code demand} is the Reactive Streams demand
 * not yet satisfied and {@code undelivered} the messages arrived but not yet handed to the
 * subscriber (unbounded demand stays unbounded).
 * A message that spans several fragments consumes one credit per fragment but one unit of demand;
 * fragments are copied out and their buffers freed as they arrive, so demand of 1 still streams a
 * large message, one credit at a time.
 *
 * <p>New credits accumulate as {@link #pending()} and leave piggybacked on the next frame going the
 * other way ({@link #takePending()}), or in an explicit CREDIT frame once
 * {@link #explicitCreditDue()} says so: when the pending count reached the threshold, or when the
 * peer holds no credit besides the pending ones (otherwise a sender waiting for credit would
 * deadlock with a receiver waiting for a threshold).
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by the progress thread.
 */
public final class ReceiveCredits {
    private final int capacity;
    private final int threshold;
    private int held;
    private int peerHolds;
    private int pending;
    private long demand;
    private long undelivered;

    /**
     * @param capacity  DATA receive buffers posted for this subchannel, &gt; 0
     * @param threshold pending credits that justify an explicit CREDIT frame, in [1, capacity]
     */
    public ReceiveCredits(int capacity, int threshold) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity > 0 required but it was " + capacity);
        }
        if (threshold < 1 || threshold > capacity) {
            throw new IllegalArgumentException("threshold in [1, " + capacity + "] required but it was " + threshold);
        }
        this.capacity = capacity;
        this.threshold = threshold;
    }

    /** Adds Reactive Streams demand ({@code request(n)}), saturating at {@link Long#MAX_VALUE}. */
    public void onDemand(long n) {
        if (n <= 0) {
            throw new IllegalArgumentException("demand n > 0 required but it was " + n);
        }
        long d = demand + n;
        demand = d < 0 ? Long.MAX_VALUE : d;
    }

    /**
     * A whole message arrived and waits for delivery: it will use one unit of demand, so that unit
     * no longer covers new credits.
     */
    public void onMessageQueued() {
        undelivered++;
    }

    /** A whole message was delivered to the subscriber: one unit of demand is used. */
    public void onDelivered() {
        if (undelivered > 0) {
            undelivered--;
        }
        if (demand != Long.MAX_VALUE && demand > 0) {
            demand--;
        }
    }

    /** The subscriber is gone: no demand covers new credits any more. */
    public void onNoDemand() {
        demand = 0;
        undelivered = 0;
    }

    /**
     * A DATA frame arrived in a receive buffer: consumes one credit the peer held.
     *
     * @return false if the peer held no credit (a protocol violation the caller must treat as fatal)
     */
    public boolean onDataArrived() {
        if (peerHolds - pending <= 0) {
            return false;
        }
        peerHolds--;
        held++;
        return true;
    }

    /** A DATA buffer was freed (the message released, or its fragment copied out). */
    public void onBufferFreed() {
        if (held <= 0) {
            throw new IllegalStateException("buffer freed but none is held");
        }
        held--;
    }

    /**
     * Grants every credit the current free buffers and demand allow.
     *
     * @return the credits newly added to {@link #pending()}
     */
    public int grant() {
        long cover = Math.min((long) capacity - held, demand == Long.MAX_VALUE ? demand : demand - undelivered);
        long extra = cover - peerHolds;
        if (extra <= 0) {
            return 0;
        }
        int n = (int) extra;
        peerHolds += n;
        pending += n;
        return n;
    }

    /** Grants {@code n} credits regardless of demand: the initial credits announced at connect time. */
    public void grantInitial(int n) {
        if (n < 0 || n > capacity - held - peerHolds) {
            throw new IllegalArgumentException("initial credits in [0, " + (capacity - held - peerHolds) + "] required but it was " + n);
        }
        peerHolds += n;
    }

    /**
     * Takes the pending credits to piggyback on a frame being sent, at most 65535 (what one frame
     * header carries); the rest stays pending.
     */
    public int takePending() {
        int n = Math.min(pending, 0xFFFF);
        pending -= n;
        return n;
    }

    /** Whether an explicit CREDIT frame should go now (there is pending credit and no frame carries it). */
    public boolean explicitCreditDue() {
        return pending > 0 && (pending >= threshold || peerHolds == pending);
    }

    public int pending() {
        return pending;
    }

    /** Credits the peer holds or will hold once the pending ones arrive. */
    public int peerHolds() {
        return peerHolds;
    }

    /** DATA buffers holding data the application has not released. */
    public int held() {
        return held;
    }

    public long demand() {
        return demand;
    }

    public int capacity() {
        return capacity;
    }

    @Override
    public String toString() {
        return "ReceiveCredits{capacity=" + capacity + ", held=" + held + ", peerHolds=" + peerHolds + ", pending=" + pending
            + ", demand=" + (demand == Long.MAX_VALUE ? "unbounded" : String.valueOf(demand)) + "}";
    }
}
