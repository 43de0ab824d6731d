package io.rdmaflux.core;

import io.rdmaflux.verbs.CmException;

import java.util.Objects;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

/**
 * How {@link RdmaNode#connect} retries a connect that failed for a reason a later attempt may not
 * have: nothing listens at the address yet (a server restarting on the same address), the host is
 * unreachable for now, the exchange broke, or no reply came in time. Immutable; every method returns
 * a new spec; set it with {@link ConnectionSpec#connectRetry(ConnectRetry)}.
 *
 * <pre>{@code
 * ConnectionSpec.defaults().connectRetry(ConnectRetry.backoff(10, 50_000_000L))  // 10 attempts, from 50 ms
 * }</pre>
 *
 * <p><b>Backoff:</b> before retry {@code k} (k = 1 for the second attempt) the connect waits
 * {@code min(maxBackoffNs, firstBackoffNs * 2^(k-1))}, then scaled by a factor drawn uniformly from
 * {@code [1 - jitter, 1 + jitter]} (the "exponential backoff with jitter" of Reactor's
 * {@code Retry.backoff}, so that clients of one restarting server do not retry in lock step). The wait
 * runs on the node's clock ({@link RdmaNode.Builder#clock}): a node in INVOKER mode on a virtual clock
 * retries in virtual time.
 *
 * <p><b>Which errors are retried:</b> by default those {@link #isRetryable(Throwable)} accepts:
 * a {@link CmException} whose {@link CmException.Reason#retryable()} holds (REFUSED, UNREACHABLE,
 * RESET, TIMED_OUT). A REJECT by the listener (wrong rail count, channel kind not offered, a node
 * closing), a malformed reply, a closed node or a bad argument is final: the connect errors with it at
 * once. {@link #retryIf} replaces the predicate.
 *
 * <p><b>Errors:</b> a non-retryable error is signalled as it is; when the attempts run out (or the
 * next wait would pass {@link #totalTimeoutNs}) the connect errors with a {@link ConnectFailedException}
 * naming the address, the attempts and the elapsed time, with the last error as its cause. Closing the
 * node while a retry waits errors the connect with an {@link IllegalStateException} naming the node.
 *
 * <p>The same classification serves a Reactor retry of your own:
 * {@code node.connect(a, spec).retryWhen(Retry.backoff(5, Duration.ofMillis(50)).filter(ConnectRetry::isRetryable))}
 * (that one waits on Reactor's parallel scheduler, in real time).
 */
public final class ConnectRetry {
    private static final ConnectRetry NONE = new ConnectRetry(1, 0, 0, 0, Long.MAX_VALUE, ConnectRetry::isRetryable);

    private final int maxAttempts;
    private final long firstBackoffNs;
    private final long maxBackoffNs;
    private final double jitter;
    private final long totalTimeoutNs;
    private final Predicate<Throwable> retryIf;

    private ConnectRetry(int maxAttempts, long firstBackoffNs, long maxBackoffNs, double jitter, long totalTimeoutNs,
                         Predicate<Throwable> retryIf) {
        this.maxAttempts = maxAttempts;
        this.firstBackoffNs = firstBackoffNs;
        this.maxBackoffNs = maxBackoffNs;
        this.jitter = jitter;
        this.totalTimeoutNs = totalTimeoutNs;
        this.retryIf = retryIf;
    }

    /** One attempt, no retry (the default of {@link ConnectionSpec}). */
    public static ConnectRetry none() {
        return NONE;
    }

    /**
     * Up to {@code maxAttempts} attempts in all, waiting {@code firstBackoffNs} before the first retry and
     * doubling each time up to 30 s ({@link #maxBackoffNs}), with a jitter of 0.5 ({@link #jitter}).
     *
     * @param maxAttempts    attempts including the first, in [1, 1_000_000]
     * @param firstBackoffNs wait before the first retry, ns, &gt; 0
     * @throws IllegalArgumentException naming the value
     */
    public static ConnectRetry backoff(int maxAttempts, long firstBackoffNs) {
        if (maxAttempts < 1 || maxAttempts > 1_000_000) {
            throw new IllegalArgumentException("maxAttempts in [1, 1000000] required but it was " + maxAttempts
                + "; 1 means no retry (ConnectRetry.none())");
        }
        if (firstBackoffNs <= 0) {
            throw new IllegalArgumentException("firstBackoffNs > 0 required but it was " + firstBackoffNs
                + "; a few ms is usual (e.g. 50_000_000 for 50 ms)");
        }
        return new ConnectRetry(maxAttempts, firstBackoffNs, Math.max(firstBackoffNs, 30_000_000_000L), 0.5, Long.MAX_VALUE,
            ConnectRetry::isRetryable);
    }

    /** This spec with the longest wait between attempts, ns. @throws IllegalArgumentException unless &gt;= firstBackoffNs */
    public ConnectRetry maxBackoffNs(long ns) {
        if (ns < firstBackoffNs || ns <= 0) {
            throw new IllegalArgumentException("maxBackoffNs >= firstBackoffNs (" + firstBackoffNs + ") and > 0 required but it was " + ns);
        }
        return new ConnectRetry(maxAttempts, firstBackoffNs, ns, jitter, totalTimeoutNs, retryIf);
    }

    /**
     * This spec with the jitter factor: each wait is scaled by a uniform draw from {@code [1-factor, 1+factor]}.
     *
     * @param factor in [0, 1]; 0 makes the waits exact (deterministic tests)
     * @throws IllegalArgumentException naming the value
     */
    public ConnectRetry jitter(double factor) {
        if (!(factor >= 0 && factor <= 1)) {
            throw new IllegalArgumentException("jitter in [0, 1] required but it was " + factor);
        }
        return new ConnectRetry(maxAttempts, firstBackoffNs, maxBackoffNs, factor, totalTimeoutNs, retryIf);
    }

    /**
     * This spec with a bound on the whole connect, ns from its subscription: no retry starts whose wait
     * would end past it (each attempt still has {@link ConnectionSpec#connectTimeoutNs()}).
     *
     * @throws IllegalArgumentException unless &gt; 0
     */
    public ConnectRetry totalTimeoutNs(long ns) {
        if (ns <= 0) {
            throw new IllegalArgumentException("totalTimeoutNs > 0 required but it was " + ns);
        }
        return new ConnectRetry(maxAttempts, firstBackoffNs, maxBackoffNs, jitter, ns, retryIf);
    }

    /** This spec retrying the errors {@code predicate} accepts instead of {@link #isRetryable(Throwable)}'s. */
    public ConnectRetry retryIf(Predicate<Throwable> predicate) {
        return new ConnectRetry(maxAttempts, firstBackoffNs, maxBackoffNs, jitter, totalTimeoutNs,
            Objects.requireNonNull(predicate, "predicate"));
    }

    /**
     * Whether {@code error}, from a connect, may not recur on a later attempt at the same address: a
     * {@link CmException} (possibly wrapped in a {@link CompletionException}) with a retryable
     * {@linkplain CmException.Reason reason}. Everything else (a REJECT, a malformed reply, an
     * {@link IllegalArgumentException}, a closed node, a provider that does not classify its errors) is not.
     */
    public static boolean isRetryable(Throwable error) {
        Throwable t = error;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof CmException cm && cm.reason().retryable();
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    public long firstBackoffNs() {
        return firstBackoffNs;
    }

    public long maxBackoffNs() {
        return maxBackoffNs;
    }

    public double jitter() {
        return jitter;
    }

    public long totalTimeoutNs() {
        return totalTimeoutNs;
    }

    boolean retries(Throwable error) {
        return retryIf.test(error);
    }

    /**
     * The wait before retry {@code retry} (1 = before the second attempt), ns.
     *
     * @param uniform a draw from [0, 1) for the jitter
     */
    long backoffNs(int retry, double uniform) {
        long base = firstBackoffNs;
        for (int i = 1; i < retry && base < maxBackoffNs; i++) {
            base = base > Long.MAX_VALUE / 2 ? Long.MAX_VALUE : base * 2;
        }
        base = Math.min(base, maxBackoffNs);
        double scaled = base * (1 - jitter + 2 * jitter * uniform);
        return Math.max(1, (long) scaled);
    }

    @Override
    public String toString() {
        return maxAttempts == 1 ? "ConnectRetry{none}" : "ConnectRetry{maxAttempts=" + maxAttempts + ", firstBackoffNs=" + firstBackoffNs
            + ", maxBackoffNs=" + maxBackoffNs + ", jitter=" + jitter
            + (totalTimeoutNs == Long.MAX_VALUE ? "" : ", totalTimeoutNs=" + totalTimeoutNs) + "}";
    }
}
