package io.rdmaflux.core.internal.credit;

/**
 * Receive-side <em>message</em> credits of one connection: the Reactive Streams demand of the
 * receive subscriber, shared by every subchannel (rail) of the connection. A pure state machine.
 *
 * <h2>Two-level credits</h2>
 * A connection of N rails has one receive-buffer pool per rail, but one subscriber and so one
 * demand. Crediting each rail against the full demand would let N &times; demand messages arrive.
 * Splitting the demand across rails in advance has the opposite fault: a sender whose scheduler
 * wants rail 1 while the only credit sits on rail 0 stalls (a binding or window policy waits for
 * rail 1 forever). rdmaflux therefore separates what the two limits protect:
 * <ul>
 *   <li><b>buffer credits</b> (per rail, {@link ReceiveCredits}): one per free
 *       DATA receive buffer of that rail; a frame (fragment) consumes one on its rail;</li>
 *   <li><b>message credits</b> (per connection, this class): at most
 *       {@code min(k * free buffers over all rails, demand - undelivered)} outstanding, {@code k} the
 *       node's {@code messageCreditsPerBuffer} (default 8; small messages share buffers when packed;
 *       the sender takes messages that fill a buffer only as its buffer credits allow,
 *       {@code SendPipeline#requestMore});
 *       a message (its first fragment, or its RTS) consumes one whichever rail it takes.</li>
 * </ul>
 * A message may be sent only when the sender holds one message credit and a buffer credit of the
 * chosen rail. So after every event, messages that can arrive &le; outstanding demand, frames that
 * can arrive on rail r &le; free buffers of rail r, and any rail the scheduler picks can be used as
 * long as it has a free buffer: a sender is never starved by where the demand was granted. This is
 * seed 001 &sect;3.1's credit flow control with the demand unit of seed 000 &sect;4.2's virtual
 * channel (one channel, many subchannels) instead of the subchannel.
 *
 * <p>New message credits leave piggybacked in the header of any frame on any rail
 * ({@link #takePending(int)}) or in an explicit CREDIT frame once {@link #explicitCreditDue()}.
 *
 * <p><b>Concurrency:</b> not thread-safe; owned by the connection's progress thread.
 */
public final class MessageCredits {
    private final int threshold;
    private long demand;
    private long undelivered;
    private long peerHolds;
    private long pending;
    private long sentTotal;

    /**
     * Most message credits the peer may hold at once: the wire carries the running total of credits
     * granted modulo 2^15 ({@link #takeWireTotal()}), which the peer can tell from a stale total only
     * while fewer than 2^14 are outstanding.
     */
    public static final int MAX_PEER_HOLDS = (1 << 14) - 1;

    /** @param threshold pending message credits that justify an explicit CREDIT frame, &gt;= 1 */
    public MessageCredits(int threshold) {
        if (threshold < 1) {
            throw new IllegalArgumentException("threshold >= 1 required but it was " + threshold);
        }
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

    /** A whole message arrived and waits for delivery: its unit of demand covers no new credit. */
    public void onMessageQueued() {
        undelivered++;
    }

    /** A message was delivered to the subscriber: one unit of demand is used. */
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
     * The first frame of a message (or its RTS) arrived: consumes one message credit the peer held.
     *
     * @return false if the peer held none (a protocol violation the caller treats as fatal)
     */
    public boolean onMessageArrived() {
        if (peerHolds - pending <= 0) {
            return false;
        }
        peerHolds--;
        return true;
    }

    /**
     * {@code n} messages arrived at once (a packed frame): consumes {@code n} message credits, or none
     * if the peer held fewer (then the caller takes them one by one to find the one at fault).
     */
    public boolean onMessagesArrived(int n) {
        if (peerHolds - pending < n) {
            return false;
        }
        peerHolds -= n;
        return true;
    }

    /** {@code n} messages went to the subscriber as they arrived, never queued: {@code n} units of demand are used. */
    public void onDeliveredUnqueued(int n) {
        if (demand != Long.MAX_VALUE) {
            demand = Math.max(0, demand - n);
        }
    }

    /**
     * Grants every message credit demand and free buffers allow, with no message part-way in.
     *
     * @param freeBuffers free DATA receive buffers over every usable rail
     * @return credits newly added to {@link #pending()}
     */
    public long grant(long freeBuffers) {
        return grant(freeBuffers, 0);
    }

    /**
     * Grants every message credit demand and free buffers allow.
     *
     * <p>A message part-way in (its first DATA fragment or its RTS arrived, its last fragment or FIN
     * not yet) used its credit and is not yet queued for delivery: it still takes one unit of demand,
     * or a subscriber that requested {@code d} would see up to {@code d} plus one such message per rail
     * arrive.
     *
     * @param freeBuffers free DATA receive buffers over every usable rail
     * @param arriving    messages part-way in, &gt;= 0
     * @return credits newly added to {@link #pending()}
     */
    public long grant(long freeBuffers, long arriving) {
        long wanted = demand == Long.MAX_VALUE ? Long.MAX_VALUE : demand - undelivered - arriving;
        long cover = Math.min(Math.min(freeBuffers, wanted), MAX_PEER_HOLDS);
        long extra = cover - peerHolds;
        if (extra <= 0) {
            return 0;
        }
        peerHolds += extra;
        pending += extra;
        return extra;
    }

    /** Takes at most {@code max} pending credits to piggyback on a frame being sent. */
    public int takePending(int max) {
        int n = (int) Math.min(pending, max);
        pending -= n;
        return n;
    }

    /**
     * Takes every pending credit onto the wire and returns the running total of message credits granted
     * so far, modulo 2^15: the value a frame's message-credit field carries. A total, not an increment,
     * so a frame lost with a failed rail loses no credit: the next frame on any live rail carries the
     * newer total ({@link SendCredits#onGrantTotal}).
     */
    public int takeWireTotal() {
        sentTotal += pending;
        pending = 0;
        return (int) (sentTotal & 0x7FFF);
    }

    /** Whether an explicit CREDIT frame should go now: pending reached the threshold, or the peer holds nothing else. */
    public boolean explicitCreditDue() {
        return pending > 0 && (pending >= threshold || peerHolds == pending);
    }

    public long pending() {
        return pending;
    }

    /** Message credits the peer holds, or will once the pending ones arrive. */
    public long peerHolds() {
        return peerHolds;
    }

    public long demand() {
        return demand;
    }

    @Override
    public String toString() {
        return "MessageCredits{peerHolds=" + peerHolds + ", pending=" + pending + ", demand="
            + (demand == Long.MAX_VALUE ? "unbounded" : String.valueOf(demand)) + ", undelivered=" + undelivered + "}";
    }
}
