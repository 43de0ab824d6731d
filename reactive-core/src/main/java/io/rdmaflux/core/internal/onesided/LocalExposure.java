package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.MemoryRegion;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The owner's handle of a region it exposed: the memory registration made for the exposure (its own
 * lkey/rkey over the exposed range, with only the remote access flags the rights allow), and the
 * revocation's progress. The registration is deregistered once the user released the region or the
 * connection ended, never while the user may still post to it.
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

    /** Progress thread (or the closing thread): deregisters the registration; its rkeys are dead on every rail. */
    void deregister() {
        valid = false;
        registration.deregister();
        gone.tryEmitEmpty();
    }

    @Override
    public String toString() {
        return "exposed region " + id + " (" + registration.length() + " bytes, " + access + (valid ? "" : ", revoked") + ")";
    }
}
