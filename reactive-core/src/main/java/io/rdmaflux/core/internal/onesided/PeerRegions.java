package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RegionExposeFrameCodec;
import io.rdmaflux.core.frame.RegionRevokeFrameCodec;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The user's side of the regions the peer exposed: built from REGION_EXPOSE frames, handed to the
 * {@link #remoteRegions()} subscribers, invalidated by the owner's REGION_REVOKE, by this side's revoke or
 * by the connection's end, and released to the owner once no operation of this side is under way on it.
 *
 * <p><b>Concurrency:</b> the table on the progress thread; the subscriber list under its monitor (new
 * subscribers come on any thread).
 */
final class PeerRegions {
    private final OneSidedEngine engine;
    private final ControlFrames control;
    private final int rails;
    private final Map<Integer, PeerRegion> byId = new HashMap<>();
    private final List<FluxSink<RemoteRegion>> subscribers = new ArrayList<>();
    private final List<PeerRegion> valid = new ArrayList<>();
    private boolean ended;

    PeerRegions(OneSidedEngine engine, ControlFrames control, int rails) {
        this.engine = engine;
        this.control = control;
        this.rails = rails;
    }

    Flux<RemoteRegion> remoteRegions() {
        return Flux.create(sink -> {
            synchronized (subscribers) {
                for (PeerRegion r : valid) {
                    if (r.isValid()) {
                        sink.next(r);
                    }
                }
                if (ended) {
                    sink.complete();
                    return;
                }
                subscribers.add(sink);
            }
            sink.onDispose(() -> {
                synchronized (subscribers) {
                    subscribers.remove(sink);
                }
            });
        });
    }

    /** A REGION_EXPOSE frame at {@code off} of {@code b}. @return a protocol violation to report, or null */
    @Nullable String onExpose(DirectBuffer b, int off) {
        int id = RegionExposeFrameCodec.regionId(b, off);
        int frameRails = RegionExposeFrameCodec.rails(b, off);
        if (frameRails != rails) {
            return "REGION_EXPOSE of region " + id + " carries rkeys for " + frameRails + " rails but the connection has " + rails;
        }
        if (byId.containsKey(id)) {
            return "REGION_EXPOSE of region " + id + ", which the peer exposed already";
        }
        int[] rkeys = new int[rails];
        for (int r = 0; r < rails; r++) {
            rkeys[r] = RegionExposeFrameCodec.rkey(b, off, r);
        }
        PeerRegion region = new PeerRegion(engine, id, RegionExposeFrameCodec.address(b, off), RegionExposeFrameCodec.lengthBytes(b, off),
            RemoteAccess.ofWireBits(RegionExposeFrameCodec.access(b, off)), rkeys);
        byId.put(id, region);
        synchronized (subscribers) {
            valid.add(region);
            // a copy: a subscriber that has what it wanted (take(1)) is removed from the list inside next()
            for (FluxSink<RemoteRegion> s : List.copyOf(subscribers)) {
                s.next(region);
            }
        }
        return null;
    }

    /** The owner revoked region {@code id}: no new operation may use it; released once those under way completed. */
    void onRevokedByOwner(int id) {
        PeerRegion region = byId.get(id);
        if (region != null) {
            region.invalidate("revoked by its owner", true);
            releaseIfDue(region);
        }
    }

    /** Any thread: this side is done with {@code region}. */
    void requestRelease(PeerRegion region) {
        engine.submit(() -> {
            region.invalidate("released by this side (revoke())", true);
            releaseIfDue(region);
        });
    }

    /** An operation on {@code region} ended. */
    void opEnded(PeerRegion region) {
        if (region.opEnded()) {
            release(region);
        }
    }

    private void releaseIfDue(PeerRegion region) {
        if (region.releaseDue()) {
            release(region);
        }
    }

    private void release(PeerRegion region) {
        int id = region.id();
        region.releaseQueued();
        byId.remove(id);
        synchronized (subscribers) {
            valid.remove(region);
        }
        control.send(ControlFrames.ANY_RAIL, FrameType.REGION_REVOKE,
            (b, off, credits) -> RegionRevokeFrameCodec.encode(b, off, id, credits, false), region::releaseSent);
    }

    /** The connection ended: every region is invalid, every subscriber completes. */
    void terminate(String reason) {
        for (PeerRegion r : byId.values()) {
            r.ended(reason);
        }
        byId.clear();
        List<FluxSink<RemoteRegion>> toComplete;
        synchronized (subscribers) {
            ended = true;
            valid.clear();
            toComplete = new ArrayList<>(subscribers);
            subscribers.clear();
        }
        for (FluxSink<RemoteRegion> s : toComplete) {
            s.complete();
        }
    }

    /** Regions of the peer this side has not released (progress thread). */
    int held() {
        return byId.size();
    }
}
