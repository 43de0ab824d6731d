package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The owner's handle of a region it exposed: the memory registration made for the exposure (its own
 * lkey/rkey over the exposed range, with only the remote access flags the rights allow), and the
 * revocation's progress. The registration is deregistered once the user released the region or the
 * connection ended, never while the user may still post to it; {@link #revoke()} completes once the
 * provider says the memory is out of the peer's reach ({@link MemoryRegion#deregisterAsync()}).
 *
 * <p><b>Concurrency:</b> state changes on the progress thread; {@link #isValid()} and {@link #revoke()} on
 * any thread.
 */
final class LocalExposure implements RemoteRegion {
    private final OneSidedEngine engine;
    private final int id;
    private final MemoryRegion registration;
    private final RemoteAccess access;
    private final Sinks.Empty<Void> gone = Sinks.empty();
    private volatile boolean valid = true;
    /** Progress thread: the REGION_REVOKE went to the user; waiting for its release. */
    private boolean revokeSent;

    LocalExposure(OneSidedEngine engine, int id, MemoryRegion registration, RemoteAccess access) {
        this.engine = engine;
        this.id = id;
        this.registration = registration;
        this.access = access;
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public long lengthBytes() {
        return registration.length();
    }

    @Override
    public RemoteAccess access() {
        return access;
    }

    @Override
    public boolean isOwner() {
        return true;
    }

    @Override
    public boolean isValid() {
        return valid;
    }

    @Override
    public Mono<Void> revoke() {
        if (valid) {
            valid = false;
            engine.exposures().requestRevoke(this);
        }
        return gone.asMono();
    }

    MemoryRegion registration() {
        return registration;
    }

    boolean revokeSent() {
        return revokeSent;
    }

    void revokeSent(boolean sent) {
        revokeSent = sent;
    }

    /**
     * Progress thread (or the closing thread): the registration was deregistered (its rkeys are dead on
     * every rail); {@link #revoke()}'s Mono completes once {@code outOfReach} did, i.e. once no RDMA of the
     * peer can reach the memory (at once where the provider's deregistration guarantees that itself; else
     * on the progress thread's next pass, or on the completing thread once the engine is closed).
     */
    void deregistered(CompletionStage<Void> outOfReach) {
        valid = false;
        CompletableFuture<Void> f = outOfReach.toCompletableFuture();
        if (f.isDone()) {
            gone.tryEmitEmpty();
            return;
        }
        f.whenComplete((v, e) -> engine.submit(new Command() {
            @Override
            public void run() {
                gone.tryEmitEmpty();
            }

            @Override
            public void fail(Throwable error) {
                gone.tryEmitEmpty();
            }
        }));
    }

    @Override
    public String toString() {
        return "exposed region " + id + " (" + registration.length() + " bytes, " + access + (valid ? "" : ", revoked") + ")";
    }
}
