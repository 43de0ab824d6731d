package io.rdmaflux.samples;

import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waiting with a deadline ({@code System.nanoTime()} based) for the two-process samples: a timeout
 * becomes a one-line {@link UserError} naming what did not finish and {@code --timeout-s}; a
 * failure becomes one naming what failed and its root cause.
 */
final class Deadlines {
    private Deadlines() {
    }

    /** Time left until {@code deadlineNs}, at least 1 ns. */
    static Duration remaining(long deadlineNs) {
        return Duration.ofNanos(Math.max(1, deadlineNs - System.nanoTime()));
    }

    /** Blocks on {@code m} until the deadline. @throws UserError "{@code what} did not finish within --timeout-s" */
    static void block(Mono<Void> m, long deadlineNs, String what) {
        try {
            m.block(remaining(deadlineNs));
        } catch (IllegalStateException e) {
            if (e.getMessage() != null && e.getMessage().startsWith("Timeout on blocking read")) {
                throw new UserError(what + " did not finish within --timeout-s", e);
            }
            throw e;
        }
    }

    /**
     * Waits for {@code f} until the deadline.
     *
     * @throws UserError on timeout, or carrying {@code f}'s own UserError, or naming {@code what} and the root cause
     */
    static <T> T await(CompletableFuture<T> f, long deadlineNs, String what) {
        try {
            return f.get(Math.max(1, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw new UserError(what + " did not finish within --timeout-s");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof UserError u) {
                throw u;
            }
            throw new UserError(what + " failed: " + Main.rootMessage(c), c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UserError(what + " was interrupted");
        }
    }
}
