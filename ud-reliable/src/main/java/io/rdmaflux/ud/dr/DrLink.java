package io.rdmaflux.ud.dr;

import io.rdmaflux.core.RdmaException;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * A reliable, ordered, duplex message link over any lossy datagram sink/source pair: a {@link DrEndpoint}
 * behind the shape of {@code RdmaConnection} ({@link #send} and {@link #receive}). Made by {@link Dr#link}.
 *
 * <p><b>Completion:</b> the Mono of {@link #send} completes when every message of its publisher and the end of
 * stream were acknowledged by the peer; {@link #receive} completes when the peer's end of stream arrived and
 * every message before it was emitted. <b>Errors:</b> when the peer is unreachable on every rail (see
 * {@link DrEndpoint}) or breaks the protocol, both signal the endpoint's {@link RdmaException}; an error of the
 * send publisher fails the send Mono only (the peer never sees an end of stream). <b>Backpressure:</b> the
 * send publisher is asked for at most {@link DrConfig#windowVfrags()} messages beyond those in the endpoint;
 * {@link #receive}'s demand is the credit the peer gets (a slow subscriber stops its sender without loss).
 * <b>Multiple subscriptions:</b> one send and one receive subscriber per link; another gets an
 * {@link IllegalStateException}.
 *
 * <p><b>Concurrency:</b> thread-safe. Every event (datagram, message, request, timer) is queued and run by
 * one drain loop at a time, on whichever thread brought it; signals are emitted from that loop. Timers run on
 * the scheduler given. The link keeps answering its peer (ACKs of a retransmitted end of stream) until
 * {@link #dispose()}.
 *
 * <p><b>Discard support:</b> none needed: messages are heap arrays; on cancel the link stops emitting and
 * drops what it holds.
 */
public final class DrLink implements Disposable {
    private final DrEndpoint endpoint;
    private final Scheduler timers;
    private final LongSupplier clockNs;
    private final int sendQueueBound;
    private final int maxMessageBytes;
    private volatile @Nullable Throwable badRequest;
    private final AtomicInteger wip = new AtomicInteger();
    private final Queue<Datagram> inbound = new ConcurrentLinkedQueue<>();
    private final Queue<byte[]> outbound = new ConcurrentLinkedQueue<>();
    private final AtomicLong requested = new AtomicLong();
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private final AtomicInteger subscriptions = new AtomicInteger();
    private volatile @Nullable CoreSubscriber<? super byte[]> receiver;
    private volatile boolean receiveCancelled;
    private volatile @Nullable SendSubscriber sender;
    private volatile boolean disposed;
    private @Nullable Disposable sourceSubscription;
    private @Nullable Disposable timer;
    private long timerAtNs = Long.MAX_VALUE;
    private boolean receiveTerminated;
    private boolean finishQueued;

    DrLink(DrEndpoint endpoint, int maxMessageBytes, Scheduler timers, LongSupplier clockNs) {
        this.endpoint = endpoint;
        this.maxMessageBytes = maxMessageBytes;
        this.timers = timers;
        this.clockNs = clockNs;
        this.sendQueueBound = 32;
    }

    void start(Publisher<Datagram> source) {
        sourceSubscription = Flux.from(source).subscribe(d -> {
            inbound.add(d);
            drain();
        }, e -> {
            endpoint.fail(new io.rdmaflux.core.RdmaTransportException("the datagram source of the link to "
                + endpoint.peerName() + " failed: " + e, null, e));
            drain();
        });
        drain();
    }

    /**
     * Sends every message of {@code messages}, then the end of stream.
     *
     * @return completes when all were acknowledged; errors as the class says
     */
    public Mono<Void> send(Publisher<byte[]> messages) {
        return Mono.create(sink -> {
            if (sender != null) {
                sink.error(new IllegalStateException("this DrLink already has a send publisher; send once per link"));
                return;
            }
            SendSubscriber s = new SendSubscriber(sink);
            sender = s;
            sink.onDispose(() -> {
                s.dispose();
                drain();
            });
            Flux.from(messages).subscribe(s);
        });
    }

    /** The peer's messages in order, each once; one subscriber. */
    public Flux<byte[]> receive() {
        return new Flux<byte[]>() {
            @Override
            public void subscribe(CoreSubscriber<? super byte[]> actual) {
                if (subscriptions.getAndIncrement() != 0) {
                    Operators.error(actual, new IllegalStateException("DrLink.receive() allows one subscriber"));
                    return;
                }
                actual.onSubscribe(new Subscription() {
                    @Override
                    public void request(long n) {
                        if (n <= 0) {
                            badRequest = new IllegalArgumentException("Reactive Streams rule 3.9: request(n) needs n > 0 but it was " + n);
                            drain();
                            return;
                        }
                        requested.getAndUpdate(r -> Operators.addCap(r, n));
                        drain();
                    }

                    @Override
                    public void cancel() {
                        receiveCancelled = true;
                        receiver = null;
                        drain();
                    }
                });
                receiver = actual;
                drain();
            }
        };
    }

    /** The endpoint's counters (a snapshot taken in the drain loop's absence: approximate while running). */
    public DrStats stats() {
        return endpoint.stats();
    }

    @Override
    public void dispose() {
        disposed = true;
        drain();
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    private void drain() {
        if (wip.getAndIncrement() != 0) {
            return;
        }
        int missed = 1;
        do {
            drainOnce();
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void drainOnce() {
        if (disposed) {
            shutdown();
            return;
        }
        long now = clockNs.getAsLong();
        for (Datagram d; (d = inbound.poll()) != null; ) {
            view.wrap(d.bytes(), 0, Math.max(1, d.length()));
            endpoint.onDatagram(d.rail(), view, 0, d.length(), now);
        }
        SendSubscriber s = sender;
        for (byte[] m; (m = outbound.poll()) != null; ) {
            endpoint.offer(m);
        }
        if (s != null && s.upstreamDone && s.upstreamError == null && !finishQueued) {
            finishQueued = true;
            endpoint.finish();
        }
        for (int i = 0; i < 64 && endpoint.doWork(now) > 0; i++) {
            // until no more immediate work (bounded: a sink that always accepts cannot spin forever)
        }
        emit();
        RdmaException failure = endpoint.failure();
        if (s != null) {
            s.afterDrain(failure);
        }
        if (failure != null) {
            shutdown();
            return;
        }
        schedule(now);
    }

    private void emit() {
        CoreSubscriber<? super byte[]> r = receiver;
        if (receiveCancelled) {
            while (endpoint.poll() != null) {
                // a cancelled receiver takes nothing more: free the peer's credit
            }
            endpoint.expectingInbound(false);
            return;
        }
        if (r == null || receiveTerminated) {
            return;
        }
        Throwable bad = badRequest;
        if (bad != null) {
            receiveTerminated = true;
            receiveCancelled = true;
            r.onError(bad);
            return;
        }
        long done = 0;
        long want = requested.get();
        while (done < want) {
            byte[] m = endpoint.poll();
            if (m == null) {
                break;
            }
            r.onNext(m);
            done++;
        }
        if (done > 0) {
            long d = done;
            requested.getAndUpdate(x -> x == Long.MAX_VALUE ? x : x - d);
            endpoint.doWork(clockNs.getAsLong()); // a window update for the peer
        }
        RdmaException failure = endpoint.failure();
        if (failure != null) {
            receiveTerminated = true;
            r.onError(failure);
        } else if (endpoint.inboundFinished()) {
            receiveTerminated = true;
            endpoint.expectingInbound(false);
            r.onComplete();
        }
    }

    private void schedule(long now) {
        long at = endpoint.nextDeadlineNs();
        if (at == Long.MAX_VALUE || (timer != null && at >= timerAtNs && !timer.isDisposed())) {
            return;
        }
        if (timer != null) {
            timer.dispose();
        }
        timerAtNs = at;
        timer = timers.schedule(() -> {
            timerAtNs = Long.MAX_VALUE;
            drain();
        }, Math.max(0, at - now), TimeUnit.NANOSECONDS);
    }

    private void shutdown() {
        if (timer != null) {
            timer.dispose();
            timer = null;
        }
        Disposable src = sourceSubscription;
        if (src != null && (disposed || endpoint.failure() != null)) {
            src.dispose();
        }
        emit();
        inbound.clear();
        outbound.clear();
    }

    /** The subscriber of the send publisher: asks it for what the endpoint has room for. */
    private final class SendSubscriber extends BaseSubscriber<byte[]> {
        private final reactor.core.publisher.MonoSink<Void> sink;
        private volatile boolean upstreamDone;
        private volatile @Nullable Throwable upstreamError;
        private final AtomicLong outstanding = new AtomicLong();
        private boolean terminated;

        SendSubscriber(reactor.core.publisher.MonoSink<Void> sink) {
            this.sink = sink;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            drain();
        }

        @Override
        protected void hookOnNext(byte[] message) {
            outstanding.decrementAndGet();
            if (message.length > maxMessageBytes) {
                upstreamError = new IllegalArgumentException("message of " + message.length + " bytes exceeds maxMessageBytes="
                    + maxMessageBytes + "; split it or raise DrConfig.maxMessageBytes");
                upstreamDone = true;
                cancel();
            } else {
                outbound.add(message);
            }
            drain();
        }

        @Override
        protected void hookOnComplete() {
            upstreamDone = true;
            drain();
        }

        @Override
        protected void hookOnError(Throwable t) {
            upstreamError = t;
            upstreamDone = true;
            drain();
        }

        /** In the drain loop: request more, or terminate the Mono. */
        void afterDrain(@Nullable RdmaException failure) {
            if (terminated) {
                return;
            }
            Throwable e = upstreamError;
            if (failure != null || e != null) {
                terminated = true;
                dispose();
                sink.error(failure != null ? failure : e);
                return;
            }
            if (upstreamDone) {
                if (endpoint.outboundFinished()) {
                    terminated = true;
                    sink.success();
                }
                return;
            }
            if (isDisposed()) {
                return;
            }
            long room = sendQueueBound - endpoint.queuedMessages() - outbound.size() - outstanding.get();
            if (room > 0) {
                outstanding.addAndGet(room);
                request(room);
            }
        }
    }

}
