package io.rdmaflux.core.internal.credit;

/**
 * Receive-side <em>buffer</em> credits of one subchannel (rail), a pure state machine (no I/O, no
 * clock): one credit per free DATA receive buffer of the rail (seed 001 &sect;3.1: credit-based flow
 * control keeps a receive posted for every frame the peer may send; &sect;4.4: a buffer frees when
 * the application releases its message, out of order). After every event the peer holds at most
 * {@code capacity - held} credits, where {@code held} counts buffers holding data the application
 * has not released. A message of several fragments uses one credit per fragment; fragments are
 * copied out and their buffers freed as they arrive.
 *
 * <p>Subscriber demand is not counted here: a connection has one subscriber over all its rails,
 * so demand is a per-connection limit, {@link MessageCredits} (see its "two-level credits").
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
     * Grants a credit for every free buffer the peer holds none for yet.
     *
     * @return the credits newly added to {@link #pending()}
     */
    public int grant() {
        int n = capacity - held - peerHolds;
        if (n <= 0) {
            return 0;
        }
        peerHolds += n;
        pending += n;
        return n;
    }

    /**
     * Grants at most {@code max} credits for free buffers the peer holds none for yet (a channel whose
     * buffers are lent from a shared pool grants only what the pool lent it).
     *
     * @return the credits newly added to {@link #pending()}
     */
    public int grant(int max) {
        int n = Math.min(max, capacity - held - peerHolds);
        if (n <= 0) {
            return 0;
        }
        peerHolds += n;
        pending += n;
        return n;
    }

    /** Free DATA buffers the peer holds no credit for: what {@link #grant()} would grant now. */
    public int grantable() {
        return Math.max(0, capacity - held - peerHolds);
    }

    /** Grants {@code n} credits now: the initial credits announced at connect time. */
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

    public int capacity() {
        return capacity;
    }

    @Override
    public String toString() {
        return "ReceiveCredits{capacity=" + capacity + ", held=" + held + ", peerHolds=" + peerHolds + ", pending=" + pending + "}";
    }
}
