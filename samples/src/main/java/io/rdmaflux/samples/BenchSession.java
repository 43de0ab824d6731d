package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The two ends of a two-sided {@code bench} run over one {@link RdmaConnection}, speaking
 * {@link BenchWire}: the {@link Client} drives the sizes and measures (OSU style: latency is half
 * the round trip of a ping-pong; bandwidth is the bytes of a stream of {@code iterations x window}
 * messages over the time from the first send to the receiver's ACK); the {@link Server} echoes,
 * counts and acknowledges. The same code serves both ends in one JVM (mem or net fabric) and two
 * processes ({@code --listen}/{@code --connect}).
 *
 * <p><b>Threads:</b> message handlers run on the connection's progress thread and do no more than
 * count, echo and emit; the client's caller waits on futures with a deadline.
 */
final class BenchSession {
    private BenchSession() {
    }

    /** The measuring side. Its methods run one at a time on the caller's thread. */
    static final class Client implements AutoCloseable {
        private final RdmaConnection connection;
        private final String peer;
        private final Disposable receiving;
        private volatile @Nullable Consumer<RdmaMessage> handler;
        private volatile @Nullable CompletableFuture<?> current;
        private volatile @Nullable Throwable failure;
        private volatile boolean finished;

        /**
         * @param peer names the peer in errors, e.g. its address
         */
        Client(RdmaConnection connection, String peer) {
            this.connection = connection;
            this.peer = peer;
            this.receiving = connection.receive().subscribe(this::onMessage, this::fail, () -> {
                if (!finished) {
                    fail(new UserError("the peer at " + peer + " closed the connection before the run ended"));
                }
            });
        }

        private void onMessage(RdmaMessage m) {
            Consumer<RdmaMessage> h = handler;
            if (h == null) {
                int len = m.lengthBytes();
                m.release();
                fail(new UserError("the peer at " + peer + " sent an unexpected message of " + len + " bytes"));
                return;
            }
            try {
                h.accept(m);
            } catch (RuntimeException e) {
                fail(e);
            }
        }

        private void fail(Throwable e) {
            if (failure == null) {
                failure = e;
            }
            CompletableFuture<?> c = current;
            if (c != null) {
                c.completeExceptionally(e);
            }
        }

        private void begin(CompletableFuture<?> f, Consumer<RdmaMessage> onMessage) {
            current = f;
            handler = onMessage;
            Throwable failed = failure;
            if (failed != null) {
                f.completeExceptionally(failed);
            }
        }

        private <T> T await(CompletableFuture<T> f, long deadlineNs, String what) {
            try {
                return Deadlines.await(f, deadlineNs, what);
            } finally {
                handler = null;
            }
        }

        private void send(Mono<RdmaMessage> m) {
            connection.send(m).subscribe(null, this::fail);
        }

        /**
         * Sends HELLO and waits for READY.
         *
         * @throws UserError if the server rejects (its reason included) or does not answer in time
         */
        void hello(BenchWire.Hello hello, long deadlineNs) {
            CompletableFuture<Void> ready = new CompletableFuture<>();
            begin(ready, m -> {
                try {
                    BenchWire.expectReady(m, peer);
                } finally {
                    m.release();
                }
                ready.complete(null);
            });
            send(Mono.fromCallable(hello::encode));
            await(ready, deadlineNs, "the listener's answer to HELLO");
        }

        /**
         * Ping-pong of {@code warmup + iterations} messages of {@code size} bytes.
         *
         * @return round-trip times in ns, warm-up excluded
         */
        Histogram latency(int size, int warmup, int iterations, long deadlineNs) {
            Histogram h = new Histogram(3);
            byte[] payload = new byte[size];
            int total = warmup + iterations;
            Sinks.Many<RdmaMessage> out = Sinks.many().unicast().onBackpressureBuffer();
            AtomicLong sentAt = new AtomicLong();
            int[] count = {0};
            CompletableFuture<Void> done = new CompletableFuture<>();
            begin(done, m -> {
                long rtt = System.nanoTime() - sentAt.get();
                int len = m.lengthBytes();
                m.release();
                if (len != size) {
                    throw new UserError("the peer echoed " + len + " bytes for a message of " + size);
                }
                int n = ++count[0];
                if (n > warmup) {
                    h.recordValue(rtt);
                }
                if (n < total) {
                    sentAt.set(System.nanoTime());
                    out.tryEmitNext(RdmaMessage.of(payload));
                } else {
                    out.tryEmitComplete();
                    done.complete(null);
                }
            });
            // the first ping is part of the sent publisher, so that only the progress thread (the handler)
            // emits into the sink: an emit from this thread could still be draining when a fast echo's
            // handler emits, and a unicast sink drops a concurrent emit (FAIL_NON_SERIALIZED), which
            // stalled the ping-pong
            sentAt.set(System.nanoTime());
            connection.send(Mono.fromCallable(() -> RdmaMessage.of(payload)).concatWith(out.asFlux())).subscribe(null, this::fail);
            await(done, deadlineNs, "latency at " + size + " bytes");
            return h;
        }

        /**
         * One streaming round of step {@code stepIndex}: streams {@code messages} messages of {@code size}
         * bytes (the server streams as many back when {@code both}) and waits for the server's ACK.
         *
         * @return bytes/s moved (both directions counted for {@code both})
         */
        double bandwidth(int stepIndex, int size, long messages, boolean both, long deadlineNs) {
            int sizeIndex = stepIndex;
            byte[] payload = new byte[size];
            long[] got = {0};
            CompletableFuture<Void> done = new CompletableFuture<>();
            begin(done, m -> {
                if (both && got[0] < messages) {
                    int len = m.lengthBytes();
                    m.release();
                    if (len != size) {
                        throw new UserError("the peer sent " + len + " bytes in a stream of " + size + "-byte messages");
                    }
                    got[0]++;
                    return;
                }
                try {
                    BenchWire.expectAck(m, sizeIndex, messages);
                } finally {
                    m.release();
                }
                done.complete(null);
            });
            long t0 = System.nanoTime();
            send(Mono.fromCallable(() -> BenchWire.go(sizeIndex, messages)));
            connection.send(Flux.range(0, (int) messages).map(i -> RdmaMessage.of(payload))).subscribe(null, this::fail);
            await(done, deadlineNs, (both ? "bibw" : "bw") + " at " + size + " bytes");
            double seconds = (System.nanoTime() - t0) / 1e9;
            return (both ? 2 : 1) * messages * (double) size / seconds;
        }

        /** Marks the run complete: the peer closing from now on is expected. */
        void finish() {
            finished = true;
        }

        @Override
        public void close() {
            finished = true;
            receiving.dispose();
        }
    }

    /**
     * The serving side: answers one client's HELLO, then echoes (latency) or counts and
     * acknowledges (bw, bibw, msg-rate; for bibw it also streams the same load back) every size the
     * HELLO lists. {@link #done()} completes with the HELLO after the last size, or exceptionally
     * on a protocol error, a refused HELLO or a connection failure.
     */
    static final class Server implements AutoCloseable {
        private final RdmaConnection connection;
        private final BenchCommand.Test serves;
        private final int maxSizeBytes;
        private final CompletableFuture<BenchWire.Hello> done = new CompletableFuture<>();
        private final Disposable receiving;
        // the fields below are touched by the progress thread only
        private BenchWire.@Nullable Hello hello;
        private int sizeIndex = -1;
        private long count;
        private boolean started;
        /** Streaming: the round of the current step, 0 for its skipped windows when it has some, then 1 for the timed ones. */
        private int round;
        private long roundMessages;
        private Sinks.@Nullable Many<RdmaMessage> echo;
        /** Sends not yet delivered: the run is done only when the last ACK and bibw stream are in the peer's buffers. */
        private final java.util.concurrent.atomic.AtomicInteger sending = new java.util.concurrent.atomic.AtomicInteger();
        private volatile BenchWire.@Nullable Hello served;
        private boolean refusedPeer;
        /** Why the peer's HELLO was refused, once it was. */
        private volatile @Nullable UserError refusal;

        /**
         * @param serves       the test this end was started for; a HELLO for another is refused
         * @param maxSizeBytes the largest message this end accepts; a HELLO with larger sizes is refused
         */
        Server(RdmaConnection connection, BenchCommand.Test serves, int maxSizeBytes) {
            this.connection = connection;
            this.serves = serves;
            this.maxSizeBytes = maxSizeBytes;
            this.receiving = connection.receive().subscribe(this::onMessage, done::completeExceptionally, () -> {
                UserError refused = refusal;
                if (refused != null) {
                    // the peer read the REJECT and closed before this side heard the REJECT's send complete
                    done.completeExceptionally(refused);
                } else if (!done.isDone() && served == null) {
                    done.completeExceptionally(new UserError("the peer closed the connection "
                        + (hello == null ? "before its HELLO" : "during step #" + sizeIndex + " of " + hello.steps().size())));
                }
            });
        }

        CompletableFuture<BenchWire.Hello> done() {
            return done;
        }

        private void onMessage(RdmaMessage m) {
            if (done.isDone()) {
                m.release();
                return;
            }
            try {
                serve(m);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        }

        private void serve(RdmaMessage m) {
            if (refusedPeer) {
                m.release();
                return;
            }
            BenchWire.Hello h = hello;
            if (h == null) {
                try {
                    h = BenchWire.Hello.decode(m);
                } finally {
                    m.release();
                }
                String refusal = refusal(h);
                if (refusal != null) {
                    // ends the run once the REJECT is in the peer's buffers, so closing cannot overtake it
                    UserError refused = new UserError("refused the peer: " + refusal);
                    refusedPeer = true;
                    this.refusal = refused;
                    connection.send(Mono.fromCallable(() -> BenchWire.reject(refusal)))
                        .subscribe(null, e -> done.completeExceptionally(refused), () -> done.completeExceptionally(refused));
                    return;
                }
                hello = h;
                send(Mono.fromCallable(BenchWire::ready));
                next();
                return;
            }
            OsuSchedule.Step step = h.steps().get(sizeIndex);
            int size = step.sizeBytes();
            if (h.test() == BenchCommand.Test.latency) {
                if (m.lengthBytes() != size) {
                    int len = m.lengthBytes();
                    m.release();
                    throw new UserError("the peer sent " + len + " bytes in a ping-pong of " + size + "-byte messages");
                }
                Sinks.Many<RdmaMessage> e = echo;
                e.tryEmitNext(m);
                if (++count == step.warmup() + (long) step.iterations()) {
                    e.tryEmitComplete();
                    next();
                }
                return;
            }
            if (!started) {
                roundMessages = h.messages(round == 0 && step.warmup() > 0 ? step.warmup() : step.iterations());
                try {
                    BenchWire.expectGo(m, sizeIndex, roundMessages);
                } finally {
                    m.release();
                }
                started = true;
                if (h.test() == BenchCommand.Test.bibw) {
                    byte[] payload = new byte[size];
                    track(connection.send(Flux.range(0, (int) roundMessages).map(i -> RdmaMessage.of(payload))));
                }
                return;
            }
            int len = m.lengthBytes();
            m.release();
            if (len != size) {
                throw new UserError("the peer sent " + len + " bytes in a stream of " + size + "-byte messages");
            }
            if (++count == roundMessages) {
                int index = sizeIndex;
                long messages = count;
                send(Mono.fromCallable(() -> BenchWire.ack(index, messages)));
                if (round == 0 && step.warmup() > 0) {
                    // the skipped windows are done; the timed round of the same step follows
                    round = 1;
                    count = 0;
                    started = false;
                } else {
                    next();
                }
            }
        }

        private @Nullable String refusal(BenchWire.Hello h) {
            if (h.test() != serves) {
                return "it serves " + BenchCommand.name(serves) + " but the client asked for " + BenchCommand.name(h.test())
                    + "; run the same test on both sides";
            }
            for (OsuSchedule.Step s : h.steps()) {
                if (s.sizeBytes() > maxSizeBytes) {
                    return "it accepts messages of 1.." + maxSizeBytes + " bytes but the client asked for " + s.sizeBytes()
                        + "; start the listener with --sizes up to at least " + s.sizeBytes();
                }
                if (h.window() < 1 || h.messages(s.iterations()) > Integer.MAX_VALUE || h.messages(s.warmup()) > Integer.MAX_VALUE
                    || (long) s.warmup() + s.iterations() > Integer.MAX_VALUE) {
                    return "iterations " + s.iterations() + ", warm-up " + s.warmup() + " and window " + h.window() + " are out of range";
                }
            }
            return null;
        }

        private void next() {
            BenchWire.Hello h = hello;
            sizeIndex++;
            count = 0;
            started = false;
            round = 0;
            if (sizeIndex == h.steps().size()) {
                served = h;
                if (sending.get() == 0) {
                    done.complete(h);
                }
                return;
            }
            if (h.test() == BenchCommand.Test.latency) {
                Sinks.Many<RdmaMessage> e = Sinks.many().unicast().onBackpressureBuffer();
                echo = e;
                track(connection.send(e.asFlux()));
            }
        }

        private void send(Mono<RdmaMessage> m) {
            track(connection.send(m));
        }

        private void track(Mono<Void> send) {
            sending.incrementAndGet();
            send.subscribe(null, done::completeExceptionally, () -> {
                BenchWire.Hello h = served;
                // served is written before sending is read in next(): one of the two sees the other and completes
                if (sending.decrementAndGet() == 0 && h != null) {
                    done.complete(h);
                }
            });
        }

        @Override
        public void close() {
            receiving.dispose();
        }
    }
}
