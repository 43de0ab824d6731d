package io.rdmaflux.striping;

import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxOperator;
import reactor.core.publisher.Operators;
import reactor.util.concurrent.Queues;
import reactor.util.context.Context;

/**
 * The operator behind {@link Rails#stripe} and {@link Rails#multiplex}: each upstream message is
 * scheduled over the rails by a {@link CommunicationScheduler} and emitted downstream once every
 * stripe of it completed (the completion filter), in upstream order. Multiplexing is the same
 * operator with a switchover threshold no message reaches, so both share one class.
 *
 * <p>Demand: at most {@link RailsSpec#maxInFlightMessages()} messages are requested from upstream
 * beyond what downstream has taken; completed messages wait for downstream demand.
 *
 * <p>Subchannel reports arrive on any thread into per-rail single-producer rings of (stripe id,
 * time) and are applied by the serialized drain loop, so the scheduler runs on one thread at a time
 * and the data path takes no lock.
 */
final class FluxRailSchedule<T> extends FluxOperator<T, T> {
    private final RailsSpec spec;
    private final List<? extends RailSubchannel<T>> subchannels;
    private final ToLongFunction<? super T> lengthOf;
    private final LongSupplier clockNs;

    FluxRailSchedule(Flux<? extends T> source, RailsSpec spec, List<? extends RailSubchannel<T>> subchannels,
                     ToLongFunction<? super T> lengthOf, LongSupplier clockNs) {
        super(source);
        if (subchannels.size() != spec.railCount()) {
            throw new IllegalArgumentException("one subchannel per rail required: spec has " + spec.railCount()
                + " rails but " + subchannels.size() + " subchannels were given");
        }
        this.spec = spec;
        this.subchannels = List.copyOf(subchannels);
        this.lengthOf = lengthOf;
        this.clockNs = clockNs;
    }

    @Override
    public void subscribe(CoreSubscriber<? super T> actual) {
        source.subscribe(new RailScheduleSubscriber<>(actual, spec, subchannels, lengthOf, clockNs));
    }

    @Override
    public @Nullable Object scanUnsafe(Attr key) {
        if (key == Attr.PREFETCH) {
            return spec.maxInFlightMessages();
        }
        if (key == Attr.RUN_STYLE) {
            return Attr.RunStyle.SYNC;
        }
        return super.scanUnsafe(key);
    }

    static final class RailScheduleSubscriber<T> implements CoreSubscriber<T>, Subscription, Scannable,
        RailSubchannel.StripeListener {
        private final CoreSubscriber<? super T> actual;
        private final List<? extends RailSubchannel<T>> subchannels;
        private final ToLongFunction<? super T> lengthOf;
        private final LongSupplier clockNs;
        private final CommunicationScheduler<T> scheduler;
        private final int maxInFlight;
        private final Queue<T> pending;
        private final AtomicInteger wip = new AtomicInteger();
        @SuppressWarnings("rawtypes")
        private static final AtomicLongFieldUpdater<RailScheduleSubscriber> REQUESTED =
            AtomicLongFieldUpdater.newUpdater(RailScheduleSubscriber.class, "requested");
        private volatile long requested;
        private final int railCount;
        private final int mailboxMask;
        private final long[][] mailboxIds;
        private final long[][] mailboxTimes;
        private final AtomicLongArray mailboxTail;
        private final long[] mailboxHead;
        private final AtomicReferenceArray<@Nullable Throwable> failures;
        private final AtomicLongArray failureTimes;
        private final boolean[] failureSeen;
        private @Nullable Subscription upstream;
        private volatile boolean done;
        private volatile boolean cancelled;
        private @Nullable Throwable error;
        private boolean terminated;
        private int emittedSinceRequest;
        private final CommunicationScheduler.CompletedMessageHandler<T> emitter;
        private volatile boolean downstreamReady;

        RailScheduleSubscriber(CoreSubscriber<? super T> actual, RailsSpec spec, List<? extends RailSubchannel<T>> subchannels,
                               ToLongFunction<? super T> lengthOf, LongSupplier clockNs) {
            this.actual = actual;
            this.emitter = (m, psn, len) -> actual.onNext(m);
            this.subchannels = subchannels;
            this.lengthOf = lengthOf;
            this.clockNs = clockNs;
            this.maxInFlight = spec.maxInFlightMessages();
            this.pending = Queues.<T>get(maxInFlight).get();
            this.scheduler = new CommunicationScheduler<>(spec, this::post);
            this.railCount = spec.railCount();
            // a message has at most one stripe per rail, plus re-sent pieces of failed rails
            int capacity = Integer.highestOneBit(Math.max(1, maxInFlight * railCount * 2 - 1)) << 1;
            this.mailboxMask = capacity - 1;
            this.mailboxIds = new long[railCount][capacity];
            this.mailboxTimes = new long[railCount][capacity];
            this.mailboxTail = new AtomicLongArray(railCount);
            this.mailboxHead = new long[railCount];
            this.failures = new AtomicReferenceArray<>(railCount);
            this.failureTimes = new AtomicLongArray(railCount);
            this.failureSeen = new boolean[railCount];
        }

        private void post(Stripe<T> stripe) {
            subchannels.get(stripe.rail()).post(stripe);
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                for (int rail = 0; rail < railCount; rail++) {
                    subchannels.get(rail).start(rail, this);
                }
                // upstream first: a downstream that drives the rails from inside onSubscribe (a
                // virtual-time test, an INVOKER progress loop) must find messages already posted
                s.request(maxInFlight);
                downstreamReady = true;
                actual.onSubscribe(this);
                drain();
            }
        }

        @Override
        public void onNext(T t) {
            if (done) {
                Operators.onNextDropped(t, actual.currentContext());
                return;
            }
            if (!pending.offer(t)) {
                // upstream sent more than requested
                Operators.onDiscard(t, actual.currentContext());
                onError(Operators.onOperatorError(upstream, reactor.core.Exceptions.failWithOverflow(
                    "upstream sent more than the " + maxInFlight + " messages requested"), t, actual.currentContext()));
                return;
            }
            drain();
        }

        @Override
        public void onError(Throwable t) {
            if (done) {
                Operators.onErrorDropped(t, actual.currentContext());
                return;
            }
            error = t;
            done = true;
            drain();
        }

        @Override
        public void onComplete() {
            if (done) {
                return;
            }
            done = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                Operators.addCap(REQUESTED, this, n);
                drain();
            }
        }

        @Override
        public void cancel() {
            if (cancelled) {
                return;
            }
            cancelled = true;
            Subscription s = upstream;
            if (s != null) {
                s.cancel();
            }
            drain();
        }

        @Override
        public void onStripeCompleted(int rail, long stripeId, long nowNs) {
            long tail = mailboxTail.get(rail);
            if (tail - mailboxHead(rail) > mailboxMask) {
                onRailFailed(rail, new IllegalStateException("rail " + rail + " reported more completions than stripes posted"),
                    nowNs);
                return;
            }
            int slot = (int) tail & mailboxMask;
            mailboxIds[rail][slot] = stripeId;
            mailboxTimes[rail][slot] = nowNs;
            mailboxTail.lazySet(rail, tail + 1);
            drain();
        }

        private long mailboxHead(int rail) {
            // read by the producer only to detect overflow; a stale value errs on the safe side
            return mailboxHead[rail];
        }

        @Override
        public void onRailFailed(int rail, Throwable cause, long nowNs) {
            failureTimes.set(rail, nowNs);
            failures.compareAndSet(rail, null, cause);
            drain();
        }

        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            do {
                if (!terminated) {
                    drainLoop();
                }
                missed = wip.addAndGet(-missed);
            } while (missed != 0);
        }

        private void drainLoop() {
            if (cancelled) {
                terminate();
                discardAll();
                return;
            }
            try {
                drainOnce();
            } catch (RuntimeException e) {
                // a subchannel broke its contract (completion out of post order, too many reports) or
                // lengthOf threw: signals never throw, the subscriber gets the error instead
                Subscription s = upstream;
                if (s != null) {
                    s.cancel();
                }
                terminate();
                discardAll();
                actual.onError(Operators.onOperatorError(e, actual.currentContext()));
            }
        }

        private void drainOnce() {
            applyReports();
            if (!downstreamReady) {
                return;
            }
            Throwable noRail = scheduler.noRailCause();
            if (noRail != null) {
                Subscription s = upstream;
                if (s != null) {
                    s.cancel();
                }
                terminate();
                discardAll();
                actual.onError(noRail);
                return;
            }
            long r = requested;
            long emitted = 0;
            while (emitted < r && scheduler.pollCompleted(1, emitter) == 1) {
                emitted++;
            }
            if (emitted > 0) {
                Operators.produced(REQUESTED, this, emitted);
                emittedSinceRequest += (int) emitted;
            }
            long now = clockNs.getAsLong();
            T next;
            while ((next = pending.peek()) != null) {
                long psn = scheduler.send(next, lengthOf.applyAsLong(next), now);
                if (psn < 0) {
                    break;
                }
                pending.poll();
            }
            Subscription s = upstream;
            int replenish = Math.max(1, maxInFlight / 4);
            if (emittedSinceRequest >= replenish && !done && s != null) {
                int n = emittedSinceRequest;
                emittedSinceRequest = 0;
                s.request(n);
            }
            if (done) {
                Throwable e = error;
                if (e != null) {
                    terminate();
                    discardAll();
                    actual.onError(e);
                } else if (pending.isEmpty() && scheduler.inFlight() == 0) {
                    terminate();
                    actual.onComplete();
                }
            }
        }

        private void applyReports() {
            for (int rail = 0; rail < railCount; rail++) {
                long tail = mailboxTail.get(rail);
                long head = mailboxHead[rail];
                while (head < tail) {
                    int slot = (int) head & mailboxMask;
                    scheduler.onStripeCompleted(rail, mailboxIds[rail][slot], mailboxTimes[rail][slot]);
                    head++;
                }
                mailboxHead[rail] = head;
                Throwable failure = failures.get(rail);
                if (failure != null && !failureSeen[rail]) {
                    failureSeen[rail] = true;
                    scheduler.onRailFailed(rail, failure, Math.max(failureTimes.get(rail), clockNs.getAsLong()));
                }
            }
        }

        private void terminate() {
            terminated = true;
            for (RailSubchannel<T> sc : subchannels) {
                sc.stop();
            }
        }

        private void discardAll() {
            Context ctx = actual.currentContext();
            scheduler.drainInFlight((m, psn, len) -> Operators.onDiscard(m, ctx));
            Operators.onDiscardQueueWithClear(pending, ctx, null);
        }

        @Override
        public @Nullable Object scanUnsafe(Attr key) {
            if (key == Attr.PARENT) {
                return upstream;
            }
            if (key == Attr.ACTUAL) {
                return actual;
            }
            if (key == Attr.PREFETCH) {
                return maxInFlight;
            }
            if (key == Attr.BUFFERED) {
                return pending.size() + scheduler.inFlight();
            }
            if (key == Attr.REQUESTED_FROM_DOWNSTREAM) {
                return requested;
            }
            if (key == Attr.CANCELLED) {
                return cancelled;
            }
            if (key == Attr.TERMINATED) {
                return done && terminated;
            }
            if (key == Attr.ERROR) {
                return error;
            }
            if (key == Attr.RUN_STYLE) {
                return Attr.RunStyle.SYNC;
            }
            if (key == RailAttributes.METRICS) {
                return scheduler.metrics();
            }
            if (key == RailAttributes.WEIGHTS) {
                return scheduler.metrics().weights();
            }
            if (key == RailAttributes.RAIL_BYTES) {
                return scheduler.metrics().railBytes();
            }
            if (key == RailAttributes.RAIL_MESSAGES) {
                return scheduler.metrics().railMessages();
            }
            if (key == RailAttributes.RAIL_STRIPES) {
                return scheduler.metrics().railStripesCompleted();
            }
            if (key == RailAttributes.OUT_OF_ORDER) {
                return scheduler.metrics().outOfOrderCompletions();
            }
            return null;
        }
    }
}
