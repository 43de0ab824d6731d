package io.rdmaflux.striping;

import java.util.ArrayDeque;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The communication scheduler and completion filter of a virtual channel (seed 000 §4.1, Fig. 2
 * and Fig. 4), independent of any transport.
 *
 * <p><b>Send.</b> {@link #send} gives the message the next PSN and asks a policy where it goes:
 * below the switchover threshold (seed 000 §4.3, seed 002 §3.2) the {@link MultiplexingPolicy}
 * picks one rail for the whole message; at or above it the {@link StripingPolicy} splits it into
 * at most one stripe per usable rail; with {@link RailsSpec#commonFinish(boolean)} a split that follows
 * measured rates is topped up to a common finish time given each rail's queue ({@link CommonFinishSplit}).
 * Each stripe is handed to the {@link StripeSink}, which posts it on that rail's subchannel.
 *
 * <p><b>Completion filter.</b> The subchannels report every stripe completion through
 * {@link #onStripeCompleted}, in post order per rail as an RC send queue completes. Every
 * completion goes to the striping policy (sampled models learn from it); when all stripes of a
 * message completed the policy gets the message's stripe timings (adaptive weights learn from
 * them, seed 000 §4.5), and the message becomes visible to {@link #pollCompleted} — one
 * completion per message, released in PSN order.
 *
 * <p><b>Rail failure.</b> {@link #onRailFailed} removes a rail: the policies stop using it and its
 * unacknowledged stripes are re-planned over the remaining rails and posted again, with
 * {@link Stripe#resent()} set. A stripe is either acknowledged on the failed rail or re-sent, never
 * both; a stripe's bytes may reach the receiver twice (sent before the failure, acknowledgement
 * lost), which the receiver absorbs: RDMA writes of the same bytes to the same place are
 * idempotent and {@link ReceiveSequencer} drops a second copy of a PSN. When no rail remains every
 * message still in flight fails and {@link #send} returns {@link #NO_RAIL}.
 *
 * <p><b>Memory.</b> Message entries and stripes are pooled; after warm-up {@code send} and
 * {@code onStripeCompleted} allocate nothing.
 *
 * <p><b>Concurrency:</b> not thread-safe. One thread (the connection's progress agent, or the
 * drain loop of a {@link Rails} operator) calls every method; {@link #metrics()} may be called
 * from any thread.
 *
 * @param <T> the message type
 */
public final class CommunicationScheduler<T> {
    /** {@link #send} result: {@link RailsSpec#maxInFlightMessages()} messages are in flight; retry after completions. */
    public static final long BACK_PRESSURED = -1;
    /** {@link #send} result: every rail failed. */
    public static final long NO_RAIL = -2;

    /** Posts stripes on subchannels. */
    @FunctionalInterface
    public interface StripeSink<T> {
        /**
         * Posts {@code stripe} on subchannel {@link Stripe#rail()}. Must not call back into the
         * scheduler; a subchannel that cannot post reports it later with
         * {@link CommunicationScheduler#onRailFailed}.
         */
        void post(Stripe<T> stripe);
    }

    /** Receives messages released by the completion filter. */
    @FunctionalInterface
    public interface CompletedMessageHandler<T> {
        void onCompleted(T message, long psn, long lengthBytes);
    }

    static final class Entry<T> extends RecordedMessageTimings {
        long psn = -1;
        @Nullable T message;
        int outstanding;
        boolean completed;
        boolean striped;
        /** Rails on which a stripe of this message completed (a message counts once per rail it used). */
        long completedOn;

        Entry(int railCount) {
            super(railCount);
        }
    }

    private final int railCount;
    private final long switchoverThresholdBytes;
    private final long granuleBytes;
    private final MultiplexingPolicy multiplexing;
    private final StripingPolicy striping;
    private final StripeSink<T> sink;
    private final Entry<T>[] ring;
    private final int ringMask;
    private final ArrayDeque<Stripe<T>>[] outstanding;
    private final ArrayDeque<Stripe<T>> stripePool = new ArrayDeque<>();
    private final long[] split;
    /** {@link RailsSpec#commonFinish()}: per rail, bytes posted and not completed, for {@link CommonFinishSplit}. */
    private final boolean commonFinish;
    private final long[] backlogBytes;
    private final double[] rateScratch;
    private final long[] lastCompletionNs;
    private final RailCounters counters;
    private final double[] shareScratch;
    private final int maxInFlight;
    private long usableRails;
    private long nextPsn;
    private long headPsn;
    private long nextStripeId;
    private boolean initialWeightsRecorded;
    private @Nullable Throwable noRailCause;

    /**
     * @throws IllegalArgumentException if a policy does not fit the spec's rail count
     */
    @SuppressWarnings("unchecked")
    public CommunicationScheduler(RailsSpec spec, StripeSink<T> sink) {
        this.railCount = spec.railCount();
        this.switchoverThresholdBytes = spec.switchoverThresholdBytes();
        this.granuleBytes = spec.stripeGranuleBytes();
        this.multiplexing = spec.multiplexing().create(railCount);
        this.striping = spec.striping().create(railCount, granuleBytes);
        if (multiplexing.railCount() != railCount || striping.railCount() != railCount) {
            throw new IllegalArgumentException("policies must be created for " + railCount + " rails but "
                + multiplexing.name() + " has " + multiplexing.railCount() + " and " + striping.name() + " has "
                + striping.railCount());
        }
        this.sink = sink;
        this.maxInFlight = spec.maxInFlightMessages();
        int capacity = Integer.highestOneBit(Math.max(1, maxInFlight - 1)) << 1;
        this.ring = new Entry[Math.max(2, capacity)];
        this.ringMask = ring.length - 1;
        for (int i = 0; i < ring.length; i++) {
            ring[i] = new Entry<>(railCount);
        }
        this.outstanding = new ArrayDeque[railCount];
        for (int i = 0; i < railCount; i++) {
            outstanding[i] = new ArrayDeque<>();
        }
        this.split = new long[railCount];
        this.commonFinish = spec.commonFinish();
        this.backlogBytes = new long[railCount];
        this.rateScratch = new double[railCount];
        this.lastCompletionNs = new long[railCount];
        this.shareScratch = new double[railCount];
        this.usableRails = RailMask.all(railCount);
        this.counters = new RailCounters(railCount, spec.weightHistoryCapacity());
    }

    /**
     * The weight history starts with the initial weights at the channel's first event that carries
     * its clock: the constructor has none, and a sample at 0 sat whole hours before the first update
     * on a system clock (a real-time plot began at -16035 s).
     */
    private void recordInitialWeights(long nowNs) {
        if (!initialWeightsRecorded) {
            initialWeightsRecorded = true;
            counters.recordWeights(nowNs, sharesInto(shareScratch));
        }
    }

    /**
     * Schedules one message.
     *
     * @param lengthBytes message length, {@code >= 0}
     * @param nowNs       current time of the channel's clock, in ns
     * @return the message's PSN, or {@link #BACK_PRESSURED} / {@link #NO_RAIL} (nothing was posted)
     * @throws IllegalArgumentException if {@code lengthBytes < 0}
     */
    public long send(T message, long lengthBytes, long nowNs) {
        if (lengthBytes < 0) {
            throw new IllegalArgumentException("lengthBytes >= 0 required but it was " + lengthBytes);
        }
        recordInitialWeights(nowNs);
        if (usableRails == 0) {
            return NO_RAIL;
        }
        if (nextPsn - headPsn >= maxInFlight) {
            return BACK_PRESSURED;
        }
        long psn = nextPsn++;
        Entry<T> e = ring[(int) psn & ringMask];
        e.psn = psn;
        e.message = message;
        e.reset(lengthBytes);
        e.outstanding = 0;
        e.completed = false;
        e.completedOn = 0;
        e.striped = lengthBytes >= switchoverThresholdBytes && RailMask.count(usableRails) > 1 && lengthBytes > 0;
        plan(e, 0, lengthBytes, e.striped, false, nowNs);
        return psn;
    }

    /** Plans and posts bytes {@code [offset, offset+length)} of {@code e} over the usable rails. */
    private void plan(Entry<T> e, long offset, long length, boolean stripe, boolean resent, long nowNs) {
        if (stripe) {
            striping.split(length, usableRails, nowNs, split);
            if (commonFinish && striping.splitsByRate()) {
                CommonFinishSplit.topUp(length, usableRails, backlogBytes, granuleBytes, split, rateScratch);
            }
            long at = offset;
            for (int rail = 0; rail < railCount; rail++) {
                if (split[rail] > 0) {
                    if (!RailMask.contains(usableRails, rail)) {
                        throw new IllegalStateException(striping.name() + " gave " + split[rail] + " bytes to unusable rail "
                            + rail + " (usable mask 0x" + Long.toHexString(usableRails) + ")");
                    }
                    post(e, rail, at, split[rail], resent, nowNs);
                    at += split[rail];
                }
            }
            if (at != offset + length) {
                throw new IllegalStateException(striping.name() + " split " + length + " bytes into " + (at - offset)
                    + ": " + Arrays.toString(split));
            }
        } else {
            int rail = multiplexing.selectRail(length, usableRails);
            if (!RailMask.contains(usableRails, rail)) {
                throw new IllegalStateException(multiplexing.name() + " chose unusable rail " + rail
                    + " (usable mask 0x" + Long.toHexString(usableRails) + ")");
            }
            post(e, rail, offset, length, resent, nowNs);
        }
    }

    private void post(Entry<T> e, int rail, long offset, long length, boolean resent, long nowNs) {
        Stripe<T> s = stripePool.poll();
        if (s == null) {
            s = new Stripe<>();
        }
        s.stripeId = nextStripeId++;
        s.psn = e.psn;
        s.rail = rail;
        s.offsetBytes = offset;
        s.lengthBytes = length;
        s.messageLengthBytes = e.lengthBytes();
        s.postedNs = nowNs;
        s.railIdleAtPost = outstanding[rail].isEmpty();
        s.resent = resent;
        s.striped = e.striped;
        s.entry = e;
        e.outstanding++;
        e.addStripe(rail, length);
        outstanding[rail].add(s);
        backlogBytes[rail] += length;
        counters.posted(rail);
        striping.onStripePosted(rail, length, nowNs);
        sink.post(s);
    }

    /**
     * The subchannel of {@code rail} completed the stripe {@code stripeId} successfully.
     * Completions of a rail after it failed are ignored (its stripes were re-sent).
     *
     * @throws IllegalStateException if {@code stripeId} is not the oldest stripe outstanding on
     *                               {@code rail} (a subchannel must complete in post order)
     */
    public void onStripeCompleted(int rail, long stripeId, long nowNs) {
        checkRail(rail);
        if (!RailMask.contains(usableRails, rail)) {
            return;
        }
        Stripe<T> s = outstanding[rail].peek();
        if (s == null || s.stripeId != stripeId) {
            throw new IllegalStateException("completion of stripe " + stripeId + " on rail " + rail + " but the oldest "
                + "outstanding stripe there is " + (s == null ? "none" : String.valueOf(s.stripeId))
                + "; a subchannel must report completions once each and in post order");
        }
        outstanding[rail].poll();
        backlogBytes[rail] -= s.lengthBytes;
        Entry<T> e = s.entry;
        if (e == null) {
            throw new IllegalStateException("stripe " + stripeId + " has no message");
        }
        // the stripe's delivery time on its rail: from post, or from the previous completion on the
        // same rail if it queued behind earlier stripes (see MessageTimings#deliveryTimeNs)
        long deliveryNs = nowNs - Math.max(s.postedNs, lastCompletionNs[rail]);
        if (deliveryNs <= 0 && s.lengthBytes > 0) {
            e.censor();
        }
        lastCompletionNs[rail] = nowNs;
        e.addDelivery(rail, deliveryNs);
        e.completedOn |= 1L << rail;
        counters.completed(rail, s.lengthBytes);
        striping.onStripeCompleted(rail, s.lengthBytes, s.postedNs, nowNs, s.railIdleAtPost, outstanding[rail].size());
        recycle(s);
        if (--e.outstanding == 0) {
            e.completed = true;
            e.completed(nowNs);
            counters.messageCompleted(e.completedOn);
            if (e.psn != headPsn && !earlierAllCompleted(e.psn)) {
                counters.outOfOrderCompletion();
            }
            if (e.striped) {
                striping.onMessageCompleted(e);
                counters.recordWeights(nowNs, sharesInto(shareScratch));
            }
        }
    }

    private boolean earlierAllCompleted(long psn) {
        for (long p = headPsn; p < psn; p++) {
            if (!ring[(int) p & ringMask].completed) {
                return false;
            }
        }
        return true;
    }

    /**
     * The subchannel of {@code rail} failed (error completion, port down, peer gone). Idempotent.
     * Its outstanding stripes are re-planned over the usable rails and posted again; if none
     * remains, every message in flight fails with a {@link NoRailException} carrying {@code cause}.
     *
     * @return the number of stripes re-sent
     */
    public int onRailFailed(int rail, Throwable cause, long nowNs) {
        checkRail(rail);
        if (!RailMask.contains(usableRails, rail)) {
            return 0;
        }
        recordInitialWeights(nowNs);
        usableRails &= ~(1L << rail);
        counters.railFailed(rail);
        striping.onRailRemoved(rail);
        counters.recordWeights(nowNs, sharesInto(shareScratch));
        ArrayDeque<Stripe<T>> lost = outstanding[rail];
        backlogBytes[rail] = 0;
        if (usableRails == 0) {
            noRailCause = new NoRailException("every rail of the virtual channel failed; last was rail " + rail, cause);
            drainAll();
            return 0;
        }
        int resent = 0;
        Stripe<T> s;
        while ((s = lost.poll()) != null) {
            Entry<T> e = s.entry;
            if (e == null) {
                throw new IllegalStateException("stripe " + s.stripeId + " has no message");
            }
            e.outstanding--;
            e.stripeResent(rail, s.lengthBytes);
            boolean stripeAgain = e.striped && s.lengthBytes >= switchoverThresholdBytes && RailMask.count(usableRails) > 1;
            plan(e, s.offsetBytes, s.lengthBytes, stripeAgain, true, nowNs);
            counters.resent();
            resent++;
            recycle(s);
        }
        return resent;
    }

    private void drainAll() {
        for (ArrayDeque<Stripe<T>> q : outstanding) {
            Stripe<T> s;
            while ((s = q.poll()) != null) {
                recycle(s);
            }
        }
    }

    /**
     * Releases completed messages in PSN order, at most {@code max}.
     *
     * @return number released
     */
    public int pollCompleted(int max, CompletedMessageHandler<T> handler) {
        int n = 0;
        while (n < max && headPsn < nextPsn) {
            Entry<T> e = ring[(int) headPsn & ringMask];
            if (!e.completed) {
                break;
            }
            T message = e.message;
            e.message = null;
            headPsn++;
            n++;
            counters.messageReleased();
            if (message != null) {
                handler.onCompleted(message, e.psn, e.lengthBytes());
            }
        }
        return n;
    }

    /**
     * Hands every message still in flight (not yet released) to {@code handler} and forgets it;
     * used when the channel fails or is cancelled so the caller can discard the messages.
     *
     * @return number of messages drained
     */
    public int drainInFlight(CompletedMessageHandler<T> handler) {
        int n = 0;
        drainAll();
        while (headPsn < nextPsn) {
            Entry<T> e = ring[(int) headPsn & ringMask];
            T message = e.message;
            e.message = null;
            e.completed = false;
            headPsn++;
            if (message != null) {
                n++;
                handler.onCompleted(message, e.psn, e.lengthBytes());
            }
        }
        return n;
    }

    /** Why the channel has no rail left, or null while one remains. */
    public @Nullable Throwable noRailCause() {
        return noRailCause;
    }

    /** Bit mask of the rails still usable. */
    public long usableRails() {
        return usableRails;
    }

    /** Messages sent and not yet released by {@link #pollCompleted}. */
    public int inFlight() {
        return (int) (nextPsn - headPsn);
    }

    /** Stripes posted on {@code rail} and not yet completed. */
    public int outstandingOn(int rail) {
        checkRail(rail);
        return outstanding[rail].size();
    }

    /** Rails of this channel. */
    public int railCount() {
        return railCount;
    }

    /** PSN the next message will get. */
    public long nextPsn() {
        return nextPsn;
    }

    /** The striping policy (for tests and tools; do not call it concurrently with the scheduler). */
    public StripingPolicy stripingPolicy() {
        return striping;
    }

    /** The multiplexing policy (for tests and tools). */
    public MultiplexingPolicy multiplexingPolicy() {
        return multiplexing;
    }

    /** A snapshot of per-rail counters, current weights and the weight history; any thread. */
    public StripingMetrics metrics() {
        return counters.snapshot(multiplexing.name(), striping.name(), sharesInto(new double[railCount]));
    }

    private double[] sharesInto(double[] out) {
        for (int rail = 0; rail < railCount; rail++) {
            out[rail] = striping.share(rail);
        }
        return out;
    }

    private void recycle(Stripe<T> s) {
        s.entry = null;
        stripePool.add(s);
    }

    private void checkRail(int rail) {
        if (rail < 0 || rail >= railCount) {
            throw new IllegalArgumentException("rail in [0, " + railCount + ") required but it was " + rail);
        }
    }
}
