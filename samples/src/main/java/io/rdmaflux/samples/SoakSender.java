package io.rdmaflux.samples;

import io.rdmaflux.core.ConnectRetry;
import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.verbs.PortAddress;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The soak's sending side: until the run's end, one connection per epoch (so each run also soaks
 * connect and close), streaming DATA messages ({@link SoakWire#data}, sequence numbers running on
 * across epochs) as fast as the credits allow, then END, then waiting for the receiver's verdict,
 * which must count every message of the epoch as verified.
 *
 * <p>With flaps on, each epoch takes one random rail down at a random point in its middle third for a
 * random 50 ms .. {@code maxDownMs} and brings it back up before the epoch ends ({@link SoakEndpoint#setRailUp});
 * a short outage is ridden out by RC retransmission, a long one fails the rail over to the other. Because
 * a rail that failed over stays out of its connection (the connection does not take it back), a
 * second flap on the surviving rail would leave no rail: hence one flap per epoch and a fresh
 * connection per epoch.
 *
 * <p>Not thread-safe: one {@link #run} per instance.
 */
final class SoakSender {
    /** What the sender did over the whole run. */
    record Result(long messages, long bytes, int epochs, int flaps) {
    }

    private final SoakEndpoint endpoint;
    private final PortAddress peer;
    private final long seed;
    private final int maxMessageBytes;
    private final boolean flaps;
    private final long maxDownMs;
    private final SplittableRandom random;

    SoakSender(SoakEndpoint endpoint, PortAddress peer, long seed, int maxMessageBytes, boolean flaps, long maxDownMs) {
        this.endpoint = endpoint;
        this.peer = peer;
        this.seed = seed;
        this.maxMessageBytes = maxMessageBytes;
        this.flaps = flaps;
        this.maxDownMs = maxDownMs;
        this.random = new SplittableRandom(seed);
    }

    /**
     * Runs {@code max(1, round(runNs / epochNs))} epochs of {@code epochNs} each. The run is a whole number
     * of full epochs rather than "until {@code runNs} have passed": on a slow machine a connect, verdict and
     * close take longer, and cutting the last epoch to fit would silently shorten it below the length a flap
     * needs, so how much was tested would depend on the machine.
     *
     * @throws UserError if a connect fails, an epoch's send fails, or the receiver's verdict is not
     *                   "every message verified"
     */
    Result run(long runNs, long epochNs, long deadlineNs) {
        if (runNs <= 0 || epochNs <= 0) {
            throw new IllegalArgumentException("runNs and epochNs must be positive but they were " + runNs + " and " + epochNs);
        }
        long epochsToRun = Math.max(1, Math.round((double) runNs / epochNs));
        long seq = 0;
        long bytes = 0;
        int epochs = 0;
        int flapCount = 0;
        Scheduler producer = Schedulers.newSingle("rdmaflux-soak-producer");
        ScheduledExecutorService flapper = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "rdmaflux-soak-flapper");
            t.setDaemon(true);
            return t;
        });
        try {
            while (true) {
                long now = System.nanoTime();
                long epochEnd = now + epochNs;
                epochs++;
                boolean last = epochs >= epochsToRun;
                RdmaConnection c = connect(deadlineNs, epochs);
                ScheduledFuture<?> flap = flaps ? scheduleFlap(flapper, epochEnd - now) : null;
                if (flap != null) {
                    flapCount++;
                }
                long first = seq;
                long[] next = {seq};
                long[] sent = {0};
                try {
                    CompletableFuture<SoakWire.Verdict> verdict = c.receive().next().map(m -> {
                        try {
                            return SoakWire.Verdict.decode(m);
                        } finally {
                            m.release();
                        }
                    }).toFuture();
                    Flux<RdmaMessage> data = Flux.<RdmaMessage>generate(sink -> {
                        if (System.nanoTime() >= epochEnd) {
                            sink.complete();
                        } else {
                            byte[] b = SoakWire.data(next[0]++, seed, maxMessageBytes);
                            sent[0] += b.length;
                            sink.next(RdmaMessage.of(b));
                        }
                    }).subscribeOn(producer);
                    Flux<RdmaMessage> all = Flux.concat(data, Mono.fromCallable(() -> SoakWire.end(first, next[0] - first, last)));
                    Deadlines.block(c.send(all), deadlineNs, "sending soak epoch " + epochs);
                    SoakWire.Verdict v = Deadlines.await(verdict, deadlineNs, "the receiver's verdict on epoch " + epochs);
                    long count = next[0] - first;
                    if (v.wrong() != 0 || v.verified() != count || v.bytes() != sent[0]) {
                        throw new UserError("soak epoch " + epochs + ": sent " + count + " messages (" + sent[0] + " bytes) but the receiver verified "
                            + v.verified() + " (" + v.bytes() + " bytes) and found " + v.wrong() + " wrong; see the receiver's report");
                    }
                    seq = next[0];
                    bytes += sent[0];
                    if (flap != null) {
                        flap.get(Math.max(1, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
                    }
                } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                    throw new UserError("soak epoch " + epochs + ": the rail flap did not finish: " + e, e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new UserError("interrupted in soak epoch " + epochs);
                } finally {
                    c.close();
                    c.onClose().onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(30));
                }
                if (last) {
                    return new Result(seq, bytes, epochs, flapCount);
                }
            }
        } finally {
            flapper.shutdownNow();
            for (int r = 0; r < endpoint.rails(); r++) {
                endpoint.setRailUp(r, true);
            }
            producer.dispose();
        }
    }

    private RdmaConnection connect(long deadlineNs, int epoch) {
        long timeoutNs = Math.max(1, Math.min(deadlineNs - System.nanoTime(), Duration.ofSeconds(30).toNanos()));
        ConnectionSpec spec = ConnectionSpec.rails(endpoint.rails()).striping(endpoint.probe()).connectTimeoutNs(timeoutNs)
            .connectRetry(ConnectRetry.backoff(20, Duration.ofMillis(100).toNanos()));
        try {
            RdmaConnection c = endpoint.node().connect(peer, spec).block(Duration.ofNanos(timeoutNs).plusSeconds(30));
            if (c == null) {
                throw new UserError("soak epoch " + epoch + ": no answer from " + peer.host() + ":" + peer.port());
            }
            return c;
        } catch (UserError e) {
            throw e;
        } catch (RuntimeException e) {
            throw new UserError("soak epoch " + epoch + ": cannot connect to " + peer.host() + ":" + peer.port() + ": " + Main.rootMessage(e)
                + "; start the receiver first (rdmaflux soak --listen HOST:PORT)", e);
        }
    }

    /** One flap of a random rail inside the middle third of an epoch of {@code epochNs}; null if the epoch is too short (< 300 ms). */
    private ScheduledFuture<?> scheduleFlap(ScheduledExecutorService flapper, long epochNs) {
        long epochMs = epochNs / 1_000_000;
        if (epochMs < 300 || endpoint.rails() < 2) {
            return null;
        }
        int rail = random.nextInt(endpoint.rails());
        long atMs = epochMs / 3 + random.nextLong(Math.max(1, epochMs / 3));
        long downMs = 50 + random.nextLong(Math.max(1, Math.min(maxDownMs, epochMs / 3) - 49));
        return flapper.schedule(() -> {
            endpoint.setRailUp(rail, false);
            try {
                Thread.sleep(downMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                endpoint.setRailUp(rail, true);
            }
        }, atMs, TimeUnit.MILLISECONDS);
    }
}
