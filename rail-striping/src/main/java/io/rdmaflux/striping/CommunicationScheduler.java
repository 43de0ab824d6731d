package io.rdmaflux.striping;

import io.rdmaflux.core.stripe.RecordedMessageTimings;
import io.rdmaflux.core.stripe.PsnOrder;
import io.rdmaflux.core.stripe.StripeEngine;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The communication scheduler and completion filter of a virtual channel (seed 000 §4.1, Fig. 2
 * and Fig. 4), independent of any transport: a thin layer over reactive-core's {@link StripeEngine}
 * (plan, per-stripe accounting, completion filter, policy feedback, re-plan) and {@link PsnOrder}
 * (release in PSN order) that adds PSNs, the multiplexing policy, {@link Stripe} handles for a
 * {@link StripeSink}, post-order checks per rail and metrics. Used by the {@link Rails} operators and
 * {@code OneSidedRails}.
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

    private final int railCount;
    private final long switchoverThresholdBytes;
    private final MultiplexingPolicy multiplexing;
    private final StripingPolicy striping;
    private final StripeSink<T> sink;
    private final PsnOrder order;
    private final StripeEngine engine;
    private final @Nullable T[] messages;
    /** Per rail, the stripes posted there and not completed, in post order (an RC queue completes in order). */
    private final ArrayDeque<Stripe<T>>[] outstanding;
    private final ArrayDeque<Stripe<T>> stripePool = new ArrayDeque<>();
    private final RailCounters counters;
    private final double[] shareScratch;
    private final int maxInFlight;
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
        long granuleBytes = spec.stripeGranuleBytes();
        this.multiplexing = spec.multiplexing().create(railCount);
        this.striping = spec.striping().create(railCount, granuleBytes);
        if (multiplexing.railCount() != railCount || striping.railCount() != railCount) {
            throw new IllegalArgumentException("policies must be created for " + railCount + " rails but "
                + multiplexing.name() + " has " + multiplexing.railCount() + " and " + striping.name() + " has "
                + striping.railCount());
        }
        this.sink = sink;
        this.maxInFlight = spec.maxInFlightMessages();
        this.order = new PsnOrder(maxInFlight);
        CommonFinishStriping policy = new CommonFinishStriping(striping, spec.commonFinish(), granuleBytes);
        this.engine = new StripeEngine(railCount, order.capacity(), policy);
        this.messages = (T[]) new Object[order.capacity()];
        this.outstanding = new ArrayDeque[railCount];
        for (int i = 0; i < railCount; i++) {
            outstanding[i] = new ArrayDeque<>();
        }
        this.shareScratch = new double[railCount];
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
     * @throws IllegalStateException    if a policy chose wrongly (names the policy and its choice)
     */
    public long send(T message, long lengthBytes, long nowNs) {
        if (lengthBytes < 0) {
            throw new IllegalArgumentException("lengthBytes >= 0 required but it was " + lengthBytes);
        }
        recordInitialWeights(nowNs);
        long usable = engine.usableRails();
        if (usable == 0) {
            return NO_RAIL;
        }
        if (order.inFlight() >= maxInFlight) {
            return BACK_PRESSURED;
        }
        long psn = order.assign();
        int e = order.slot(psn);
        messages[e] = message;
        engine.begin(e, psn, lengthBytes);
        if (lengthBytes >= switchoverThresholdBytes && RailMask.count(usable) > 1 && lengthBytes > 0) {
            engine.split(e, usable, nowNs);
            postInRailOrder(e, engine.slots(e), false, nowNs);
        } else {
            int rail = select(lengthBytes, usable);
            engine.whole(e, rail);
            post(e, rail, false, nowNs);
        }
        return psn;
    }

    private int select(long lengthBytes, long usable) {
        int rail = multiplexing.selectRail(lengthBytes, usable);
        if (!RailMask.contains(usable, rail)) {
            throw new IllegalStateException(multiplexing.name() + " chose unusable rail " + rail
                + " (usable mask 0x" + Long.toHexString(usable) + ")");
        }
        return rail;
    }

    /** Posts the stripes in {@code slots} of entry {@code e} by increasing offset (rail order of a split). */
    private void postInRailOrder(int e, long slots, boolean resent, long nowNs) {
        while (slots != 0) {
            int first = -1;
            for (long m = slots; m != 0; m &= m - 1) {
                int s = Long.numberOfTrailingZeros(m);
                if (first < 0 || engine.stripeOffset(e, s) < engine.stripeOffset(e, first)) {
                    first = s;
                }
            }
            slots &= ~(1L << first);
            post(e, first, resent, nowNs);
        }
    }

    private void post(int e, int slot, boolean resent, long nowNs) {
        int rail = engine.carrier(e, slot);
        engine.post(e, slot, rail, nowNs);
        Stripe<T> s = stripePool.poll();
        if (s == null) {
            s = new Stripe<>();
        }
        s.stripeId = nextStripeId++;
        s.psn = engine.psn(e);
        s.rail = rail;
        s.offsetBytes = engine.stripeOffset(e, slot);
        s.lengthBytes = engine.stripeBytes(e, slot);
        s.messageLengthBytes = engine.lengthBytes(e);
        s.postedNs = nowNs;
        s.railIdleAtPost = engine.idleAtPost(e, slot);
        s.resent = resent;
        s.striped = engine.striped(e);
        s.owner = this;
        s.entry = e;
        s.slot = slot;
        outstanding[rail].add(s);
        counters.posted(rail);
        sink.post(s);
    }

    /** The message of engine entry {@code e} while it is in flight, else null (for {@link Stripe#message()}). */
    @Nullable T messageAt(int e) {
        return messages[e];
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
        if (!RailMask.contains(engine.usableRails(), rail)) {
            return;
        }
        Stripe<T> s = outstanding[rail].peek();
        if (s == null || s.stripeId != stripeId) {
            throw new IllegalStateException("completion of stripe " + stripeId + " on rail " + rail + " but the oldest "
                + "outstanding stripe there is " + (s == null ? "none" : String.valueOf(s.stripeId))
                + "; a subchannel must report completions once each and in post order");
        }
        outstanding[rail].poll();
        int e = s.entry;
        counters.completed(rail, s.lengthBytes);
        int result = engine.complete(e, s.slot, nowNs);
        recycle(s);
        if (result == StripeEngine.MESSAGE) {
            counters.messageCompleted(engine.completedOn(e));
            if (order.complete(engine.psn(e))) {
                counters.outOfOrderCompletion();
            }
            if (engine.striped(e)) {
                counters.recordWeights(nowNs, sharesInto(shareScratch));
            }
        }
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
        if (!RailMask.contains(engine.usableRails(), rail)) {
            return 0;
        }
        recordInitialWeights(nowNs);
        counters.railFailed(rail);
        engine.railFailed(rail);
        counters.recordWeights(nowNs, sharesInto(shareScratch));
        long usable = engine.usableRails();
        if (usable == 0) {
            noRailCause = new NoRailException("every rail of the virtual channel failed; last was rail " + rail, cause);
            drainAll();
            return 0;
        }
        ArrayDeque<Stripe<T>> lost = outstanding[rail];
        int resent = 0;
        Stripe<T> s;
        while ((s = lost.poll()) != null) {
            int e = s.entry;
            int slot = s.slot;
            engine.unpost(e, slot);
            if (engine.striped(e) && s.lengthBytes >= switchoverThresholdBytes && RailMask.count(usable) > 1) {
                postInRailOrder(e, engine.resplit(e, slot, nowNs), true, nowNs);
            } else {
                engine.move(e, slot, select(s.lengthBytes, usable));
                post(e, slot, true, nowNs);
            }
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
        while (n < max && order.headCompleted()) {
            long psn = order.head();
            int e = order.slot(psn);
            T message = messages[e];
            messages[e] = null;
            order.release();
            n++;
            counters.messageReleased();
            if (message != null) {
                handler.onCompleted(message, psn, engine.lengthBytes(e));
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
        while (order.inFlight() > 0) {
            long psn = order.head();
            int e = order.slot(psn);
            T message = messages[e];
            messages[e] = null;
            order.release();
            if (message != null) {
                n++;
                handler.onCompleted(message, psn, engine.lengthBytes(e));
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
        return engine.usableRails();
    }

    /** Messages sent and not yet released by {@link #pollCompleted}. */
    public int inFlight() {
        return order.inFlight();
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
        return order.nextPsn();
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
        s.owner = null;
        stripePool.add(s);
    }

    private void checkRail(int rail) {
        if (rail < 0 || rail >= railCount) {
            throw new IllegalArgumentException("rail in [0, " + railCount + ") required but it was " + rail);
        }
    }
}
