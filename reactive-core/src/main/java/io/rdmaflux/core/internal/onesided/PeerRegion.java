package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The user's handle of a region the peer exposed: address, length, rights and the rkey of each rail as
 * the REGION_EXPOSE frame carried them, the operations under way on it, and why it stopped being valid.
 * The release (a REGION_REVOKE without BY_OWNER) goes only once no operation of this side is under way
 * on it, so the owner never deregisters memory an RDMA of this side may still reach.
 *
 * <p><b>Concurrency:</b> counters and state on the progress thread; {@link #isValid()}, {@link #revoke()}
 * and the immutable fields on any thread.
 */
final class PeerRegion implements RemoteRegion {
    private final OneSidedEngine engine;
    private final int id;
    private final long address;
    private final long lengthBytes;
    private final RemoteAccess access;
    private final int[] rkeys;
    private final Sinks.Empty<Void> released = Sinks.empty();
    /** Why it is not valid any more (null while valid); volatile: the user's checks read it on any thread. */
    private volatile @Nullable String invalidReason;
    /** Progress thread: operations planned on it and not completed. */
    private int inFlight;
    private boolean releaseDue;
    private boolean releaseQueued;

    PeerRegion(OneSidedEngine engine, int id, long address, long lengthBytes, RemoteAccess access, int[] rkeys) {
        this.engine = engine;
        this.id = id;
        this.address = address;
        this.lengthBytes = lengthBytes;
        this.access = access;
        this.rkeys = rkeys;
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public long lengthBytes() {
        return lengthBytes;
    }

    @Override
    public RemoteAccess access() {
        return access;
    }

    @Override
    public boolean isOwner() {
        return false;
    }

    @Override
    public boolean isValid() {
        return invalidReason == null;
    }

    /** Why the region may not be used, or null while it may. */
    @Nullable String invalidReason() {
        return invalidReason;
    }

    @Override
    public Mono<Void> revoke() {
        engine.peerRegions().requestRelease(this);
        return released.asMono();
    }

    OneSidedEngine engine() {
        return engine;
    }

    long address() {
        return address;
    }

    /** The rkey to use on {@code rail}. */
    int rkey(int rail) {
        return rkeys[rail];
    }

    int inFlight() {
        return inFlight;
    }

    void opStarted() {
        inFlight++;
    }

    /** @return whether the release is due now (invalid, wanted, and nothing under way) */
    boolean opEnded() {
        inFlight--;
        return releaseDue && inFlight == 0 && !releaseQueued;
    }

    /** Progress thread: no new operation may use it; the release goes once none is under way (if {@code release}). */
    void invalidate(String reason, boolean release) {
        if (invalidReason == null) {
            invalidReason = reason;
        }
        releaseDue |= release;
    }

    boolean releaseDue() {
        return releaseDue && inFlight == 0 && !releaseQueued;
    }

    /** The release was queued to go: once. */
    void releaseQueued() {
        releaseQueued = true;
    }

    /** The release went to the owner. */
    void releaseSent() {
        released.tryEmitEmpty();
    }

    /** The connection ended: nothing will be sent; the revoke Mono completes. */
    void ended(String reason) {
        invalidate(reason, false);
        released.tryEmitEmpty();
    }

    @Override
    public String toString() {
        return "remote region " + id + " (" + lengthBytes + " bytes, " + access + (invalidReason == null ? "" : ", " + invalidReason) + ")";
    }
}
