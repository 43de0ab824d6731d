package io.rdmaflux.core;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProgressAgent;
import org.agrona.concurrent.NanoClock;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;

import java.util.Iterator;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;

/**
 * The connects of one node that wait for their next attempt ({@link ConnectRetry}): a progress agent
 * of the node's engine, so a wait ends on the node's clock (virtual in INVOKER mode) on the progress
 * thread, which then starts the attempt. {@link #close()} (the node closing) fails every waiting
 * connect.
 *
 * <p><b>Concurrency:</b> {@link #connect} on any thread; attempts fail and succeed on whatever thread
 * the connection manager completes them; the waits end on the progress thread.
 */
final class ConnectRetries implements ProgressAgent {
    private final String nodeName;
    private final NanoClock clock;
    private final ConcurrentLinkedQueue<Attempts> waiting = new ConcurrentLinkedQueue<>();
    private final SplittableRandom seeds = new SplittableRandom();
    private volatile boolean closed;

    ConnectRetries(String nodeName, NanoClock clock) {
        this.nodeName = nodeName;
        this.clock = clock;
    }

    /** {@code attempt} (re-subscribed per attempt) under {@code retry}; as it is when {@code retry} has one attempt. */
    Mono<RdmaConnection> connect(PortAddress address, ConnectRetry retry, Supplier<Mono<RdmaConnection>> attempt) {
        if (retry.maxAttempts() == 1) {
            return attempt.get();
        }
        return Mono.create(sink -> {
            long seed;
            synchronized (seeds) {
                seed = seeds.nextLong();
            }
            Attempts a = new Attempts(address, retry, attempt, sink, new SplittableRandom(seed), clock.nanoTime());
            sink.onDispose(a::cancel);
            a.start();
        });
    }

    @Override
    public int doWork(long nowNs) {
        if (waiting.isEmpty()) {
            return 0;
        }
        int n = 0;
        for (Iterator<Attempts> it = waiting.iterator(); it.hasNext(); ) {
            Attempts a = it.next();
            if (a.done) {
                it.remove();
            } else if (nowNs - a.nextAttemptNs >= 0) {
                it.remove();
                a.start();
                n++;
            }
        }
        return n;
    }

    @Override
    public String roleName() {
        return "connect-retries-" + nodeName;
    }

    /** Fails every waiting connect: the node is closing. Idempotent. */
    void close() {
        closed = true;
        Attempts a;
        while ((a = waiting.poll()) != null) {
            a.fail(new IllegalStateException("node " + nodeName + " closed while a connect to " + a.address
                + " waited for its attempt " + (a.attempts + 1) + "; build a new RdmaNode to connect"));
        }
    }

    /** Connects waiting for their next attempt (for tests and metrics). */
    int waitingCount() {
        return (int) waiting.stream().filter(a -> !a.done).count();
    }

    /** One connect: its attempts so far and the current one. */
    private final class Attempts {
        final PortAddress address;
        final ConnectRetry retry;
        final Supplier<Mono<RdmaConnection>> attempt;
        final MonoSink<RdmaConnection> sink;
        final SplittableRandom random;
        final long startNs;
        int attempts;
        long nextAttemptNs;
        volatile boolean done;
        volatile @Nullable Disposable current;

        Attempts(PortAddress address, ConnectRetry retry, Supplier<Mono<RdmaConnection>> attempt, MonoSink<RdmaConnection> sink,
                 SplittableRandom random, long startNs) {
            this.address = address;
            this.retry = retry;
            this.attempt = attempt;
            this.sink = sink;
            this.random = random;
            this.startNs = startNs;
        }

        void start() {
            if (done) {
                return;
            }
            attempts++;
            Mono<RdmaConnection> m;
            try {
                m = attempt.get();
            } catch (RuntimeException e) {
                fail(e);
                return;
            }
            current = m.subscribe(this::connected, this::failed);
        }

        private void connected(RdmaConnection c) {
            if (done) {
                // cancelled while the accepted reply was on its way: nobody takes this connection
                c.abort();
                return;
            }
            done = true;
            sink.success(c);
        }

        private void failed(Throwable e) {
            if (done) {
                return;
            }
            if (!retry.retries(e)) {
                fail(e);
                return;
            }
            long now = clock.nanoTime();
            long waitNs = retry.backoffNs(attempts, random.nextDouble());
            if (attempts >= retry.maxAttempts() || waitNs > retry.totalTimeoutNs() - (now - startNs)) {
                fail(new ConnectFailedException(address, attempts, now - startNs, e));
                return;
            }
            nextAttemptNs = now + waitNs;
            waiting.add(this);
            if (closed && waiting.remove(this)) {
                fail(new IllegalStateException("node " + nodeName + " is closed; build a new RdmaNode to connect to " + address));
            }
        }

        void fail(Throwable e) {
            if (done) {
                return;
            }
            done = true;
            sink.error(e);
        }

        void cancel() {
            done = true;
            Disposable d = current;
            if (d != null) {
                d.dispose();
            }
        }
    }
}
