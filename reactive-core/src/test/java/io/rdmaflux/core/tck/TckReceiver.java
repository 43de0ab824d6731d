package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;
import java.util.function.IntUnaryOperator;

/**
 * A {@code receive()} subscriber that checks every message as it arrives: PSNs strictly increasing, and
 * the {@code k}-th message byte-exact as TCK message {@code expectedSeq(k)} of {@code sizeOf(seq)} bytes
 * ({@link TckPayload}). It asks for messages as its {@link Demand} says (or holds a fixed demand, keeping
 * what it gets), counts what it asked for at the connection's own {@code receive()} and what it released,
 * and can cancel inside {@code onNext}. A failed check is kept (never thrown into the connection) and
 * rethrown by {@link #assertNoFailure()}.
 *
 * <p><b>Concurrency:</b> signals come on the progress thread of the receiving node; counters are read
 * from the test thread.
 */
public final class TckReceiver extends BaseSubscriber<RdmaMessage> {
    private final ConnectionTckFixture fx;
    private final Demand demand;
    private final long fixedDemand;
    private final IntUnaryOperator expectedSeq;
    private final IntUnaryOperator sizeOf;
    private final int cancelAfter;
    private final IntConsumer onMessage;

    private final AtomicInteger received = new AtomicInteger();
    private final AtomicLong released = new AtomicLong();
    private final AtomicLong requested = new AtomicLong();
    private final List<Integer> psns = new ArrayList<>();
    private final List<RdmaMessage> held = new ArrayList<>();
    private final ArrayDeque<RdmaMessage> outOfOrder = new ArrayDeque<>();
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private volatile boolean completed;
    private boolean holding;
    private int burstLeft;
    private int lastPsn = -1;

    private TckReceiver(Builder b) {
        this.fx = b.fx;
        this.demand = b.demand;
        this.fixedDemand = b.fixedDemand;
        this.expectedSeq = b.expectedSeq;
        this.sizeOf = b.sizeOf;
        this.cancelAfter = b.cancelAfter;
        this.onMessage = b.onMessage;
        this.holding = b.fixedDemand >= 0;
    }

    public static Builder builder(ConnectionTckFixture fx, IntUnaryOperator sizeOf) {
        return new Builder(fx, sizeOf);
    }

    /** Settings of a {@link TckReceiver}. */
    public static final class Builder {
        private final ConnectionTckFixture fx;
        private final IntUnaryOperator sizeOf;
        private Demand demand = Demand.UNBOUNDED;
        private long fixedDemand = -1;
        private IntUnaryOperator expectedSeq = k -> k;
        private int cancelAfter = -1;
        private IntConsumer onMessage = k -> { };

        private Builder(ConnectionTckFixture fx, IntUnaryOperator sizeOf) {
            this.fx = fx;
            this.sizeOf = sizeOf;
        }

        public Builder demand(Demand d) {
            this.demand = d;
            return this;
        }

        /** Requests {@code n} once and keeps every message unreleased until {@link #releaseHeld()} or {@link #stopHolding()}. */
        public Builder holding(long n) {
            this.fixedDemand = n;
            return this;
        }

        /** The sequence number the {@code k}-th message (from 0) must carry (default {@code k}). */
        public Builder expectedSeq(IntUnaryOperator f) {
            this.expectedSeq = f;
            return this;
        }

        /** Cancels inside {@code onNext} of the {@code k}-th message (counted from 1), after checking it. */
        public Builder cancelAfter(int k) {
            this.cancelAfter = k;
            return this;
        }

        /** Called on the progress thread with the count received after each message is checked. */
        public Builder onMessage(IntConsumer c) {
            this.onMessage = c;
            return this;
        }

        /** Subscribes to {@code c.receive()} now. */
        public TckReceiver subscribe(RdmaConnection c) {
            return build().subscribeTo(c);
        }

        /** The receiver, not subscribed yet (see {@link TckReceiver#subscribeTo}). */
        public TckReceiver build() {
            return new TckReceiver(this);
        }
    }

    /** Subscribes to {@code c.receive()} now; once only. */
    public TckReceiver subscribeTo(RdmaConnection c) {
        Flux<RdmaMessage> in = c.receive().doOnRequest(this::countRequest);
        if (fixedDemand < 0 && demand == Demand.LIMIT_RATE) {
            in = in.limitRate(8);
        }
        in.subscribe(this);
        return this;
    }

    private void countRequest(long n) {
        requested.getAndUpdate(v -> v + n < 0 ? Long.MAX_VALUE : v + n);
    }

    @Override
    protected void hookOnSubscribe(Subscription s) {
        if (fixedDemand >= 0) {
            if (fixedDemand > 0) {
                s.request(fixedDemand);
            }
            return;
        }
        switch (demand) {
            case ONE_AT_A_TIME -> s.request(1);
            case BURSTS -> {
                burstLeft = 7;
                s.request(7);
            }
            default -> s.request(Long.MAX_VALUE);
        }
    }

    @Override
    protected void hookOnNext(RdmaMessage m) {
        int k = received.get();
        int psn = m.psn();
        if (psn <= lastPsn) {
            fail("PSN " + psn + " after PSN " + lastPsn + " (message " + k + ")");
        }
        lastPsn = psn;
        int seq = expectedSeq.applyAsInt(k);
        String bad = TckPayload.mismatch(m, seq, sizeOf.applyAsInt(seq));
        if (bad != null) {
            fail("message " + k + " received: " + bad);
        }
        synchronized (psns) {
            psns.add(psn);
        }
        keepOrRelease(m);
        received.incrementAndGet();
        onMessage.accept(k + 1);
        if (k + 1 == cancelAfter) {
            cancel();
        } else if (fixedDemand < 0) {
            if (demand == Demand.ONE_AT_A_TIME) {
                request(1);
            } else if (demand == Demand.BURSTS && --burstLeft == 0) {
                burstLeft = 7;
                request(7);
            }
        }
        fx.signal();
    }

    private void keepOrRelease(RdmaMessage m) {
        synchronized (held) {
            if (holding) {
                held.add(m);
                return;
            }
        }
        if (demand == Demand.RELEASE_OUT_OF_ORDER && fixedDemand < 0) {
            outOfOrder.addLast(m);
            if (outOfOrder.size() == 3) {
                while (!outOfOrder.isEmpty()) {
                    release(outOfOrder.pollLast());
                }
            }
        } else {
            release(m);
        }
    }

    /** Releases what {@link Builder#holding} kept and releases every later message on arrival; any thread. */
    public void stopHolding() {
        synchronized (held) {
            holding = false;
        }
        releaseHeld();
    }

    private void release(RdmaMessage m) {
        m.release();
        released.incrementAndGet();
    }

    private void fail(String what) {
        failure.compareAndSet(null, what);
    }

    @Override
    protected void hookOnComplete() {
        completed = true;
        fx.signal();
    }

    @Override
    protected void hookOnError(Throwable t) {
        error.set(t);
        fx.signal();
    }

    @Override
    protected void hookFinally(reactor.core.publisher.SignalType type) {
        // a stream that ends releases what this subscriber still held back for out-of-order release
        while (!outOfOrder.isEmpty()) {
            release(outOfOrder.pollLast());
        }
        fx.signal();
    }

    /** Releases the messages kept by {@link Builder#holding}; any thread. */
    public void releaseHeld() {
        List<RdmaMessage> copy;
        synchronized (held) {
            copy = new ArrayList<>(held);
            held.clear();
        }
        copy.forEach(this::release);
    }

    public int received() {
        return received.get();
    }

    /** The pair this receiver belongs to. */
    public ConnectionTckFixture fixture() {
        return fx;
    }

    public long released() {
        return released.get();
    }

    /** Messages requested at the connection's {@code receive()} so far (saturating). */
    public long requested() {
        return requested.get();
    }

    public int heldCount() {
        synchronized (held) {
            return held.size();
        }
    }

    public List<Integer> psns() {
        synchronized (psns) {
            return List.copyOf(psns);
        }
    }

    public boolean completed() {
        return completed;
    }

    public Throwable error() {
        return error.get();
    }

    public boolean terminated() {
        return completed || error.get() != null;
    }

    /** @throws AssertionError naming the first message that failed a check */
    public void assertNoFailure() {
        String f = failure.get();
        if (f != null) {
            throw new AssertionError(f);
        }
    }

    @Override
    public String toString() {
        return "receiver{received=" + received() + ", released=" + released() + ", requested=" + requested() + ", held=" + heldCount()
            + ", completed=" + completed + ", error=" + error.get() + ", failure=" + failure.get() + "}";
    }
}
