package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.soft.SoftDevice;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A deregistering thread's wait for its region's rkey revocation ({@link UcxRegionExports}): when the
 * region's key went to peers, deregistration returns only once every one of them acknowledged the
 * revocation or is gone, so that no put with the old key lands after it returns, as after
 * {@code ibv_dereg_mr}. The engine settles a revocation within the revoke timeout (failing the routes
 * of peers that stay silent); the thread waits that long plus {@link #REVOKE_WAIT_GRACE_NS} at most. It
 * returns early when the engine does not take the revocation up within {@link #ENGINE_PICKUP_NS} (an
 * INVOKER provider nobody progresses any more, e.g. a node that stopped before releasing its regions):
 * nothing could then acknowledge it; the revocation stays queued, the region mapped and its memory
 * reachable, and the engine finishes it if it runs again.
 *
 * <p>Does not wait on the engine thread (the thread that last progressed this NIC: the provider's own
 * in DEDICATED mode, the caller of {@code progress} in INVOKER mode), which would have to deliver the
 * acknowledgements itself, nor on a closing device: there the revocation completes asynchronously on the
 * engine's next passes, and a put the peer issued before it saw the REVOKE may still land in the
 * region's memory, which stays mapped and reachable (never freed under the put) until then. A caller that
 * must know when (to reuse the memory) deregisters with {@link #deregisteredAsync}
 * ({@code MemoryRegion.deregisterAsync}), which never waits on any thread and returns a stage completed then.
 *
 * <p>Owns the engine thread's identity and the deregistration counters; nothing to release.
 *
 * <p><b>Concurrency:</b> {@link #deregistered} and the counters, any thread; {@link #engineIs}, engine thread.
 */
final class UcxDeregistrationWait {
    /** How much longer than the revoke timeout a deregistration waits for the engine, ns (100 ms). */
    static final long REVOKE_WAIT_GRACE_NS = 100_000_000L;

    /** How long a deregistration waits for the engine to take its revocation up before it deems the engine stopped, ns (50 ms). */
    static final long ENGINE_PICKUP_NS = 50_000_000L;

    private final UcxRegionExports exports;
    private final SoftDevice nic;
    /** Wakes the engine (any thread) so that it takes a queued revocation up. */
    private final Runnable wakeup;
    /** The thread that last ran the engine's {@code poll}: a deregistration on it must not wait. */
    private volatile @Nullable Thread engineThread;
    private final AtomicLong awaited = new AtomicLong();
    private final AtomicLong notAwaited = new AtomicLong();
    private final AtomicLong waitsExpired = new AtomicLong();
    private final AtomicLong async = new AtomicLong();

    UcxDeregistrationWait(UcxRegionExports exports, SoftDevice nic, Runnable wakeup) {
        this.exports = exports;
        this.nic = nic;
        this.wakeup = wakeup;
    }

    /** Engine, at each pass: the calling thread is the engine thread. */
    void engineIs(Thread t) {
        if (engineThread != t) {
            engineThread = t;
        }
    }

    /**
     * Any thread: queues the revocation of {@code region}'s rkey for the engine, wakes it, and waits as
     * described in the class comment (restoring the interrupt status if interrupted).
     */
    void deregistered(MemoryRegion region) {
        UcxRegionExports.Revocation rv = exports.deregistered(region);
        if (exports.hasDeregistrations()) {
            wakeup.run();
        }
        if (rv == null) {
            return;
        }
        if (Thread.currentThread() == engineThread || nic.isClosing()) {
            notAwaited.incrementAndGet();
            return;
        }
        awaited.incrementAndGet();
        boolean interrupted = false;
        boolean done;
        try {
            long t0 = System.nanoTime();
            done = rv.awaitPickup(ENGINE_PICKUP_NS)
                && rv.await(exports.revokeTimeoutNs() + REVOKE_WAIT_GRACE_NS - (System.nanoTime() - t0));
        } catch (InterruptedException e) {
            interrupted = true;
            done = rv.isDone();
        }
        if (!done) {
            waitsExpired.incrementAndGet();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Any thread, never blocks ({@link io.rdmaflux.verbs.MemoryRegion#deregisterAsync()}): queues the
     * revocation of {@code region}'s rkey for the engine, wakes it, and returns a stage the engine completes
     * once the revocation is settled (every subscriber acknowledged or gone, or taken for failed after the
     * revoke timeout), or the NIC closes; completed at once when the key never went to a peer. Unlike
     * {@link #deregistered}, the engine thread gets the same guarantee: it learns when, instead of not
     * waiting.
     */
    CompletionStage<Void> deregisteredAsync(MemoryRegion region) {
        UcxRegionExports.Revocation rv = exports.deregistered(region);
        if (exports.hasDeregistrations()) {
            wakeup.run();
        }
        if (rv == null) {
            return CompletableFuture.completedFuture(null);
        }
        async.incrementAndGet();
        return rv.completion();
    }

    /** Asynchronous deregistrations of regions whose key went to peers so far. */
    long async() {
        return async.get();
    }

    /** Deregistrations that waited for their revocation so far. */
    long awaited() {
        return awaited.get();
    }

    /** Deregistrations of exported regions that could not wait (engine thread, closing device) so far. */
    long notAwaited() {
        return notAwaited.get();
    }

    /** Deregistrations whose wait ended before the engine settled the revocation so far. */
    long waitsExpired() {
        return waitsExpired.get();
    }
}
