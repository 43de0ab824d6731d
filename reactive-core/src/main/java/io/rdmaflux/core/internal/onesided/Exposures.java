package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.UnsupportedCapabilityException;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RegionExposeFrameCodec;
import io.rdmaflux.core.frame.RegionRevokeFrameCodec;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The owner's side of exposed regions: each exposure registers the exposed range again, with exactly the
 * remote flags its rights allow (seed 002 &sect;3.2 registers a window "on every device"; here every rail
 * is a port of the node's one device, so one registration serves them all and the REGION_EXPOSE frame
 * carries its rkey once per rail), announces it, and deregisters it once the user released it (its own
 * release, or its answer to this side's revoke) or the connection ended. Only then: the user may have
 * RDMA under way until it releases. The owner's {@link RemoteRegion#revoke()} completes only once the
 * provider says the memory is out of the peer's reach ({@link MemoryRegion#deregisterAsync()}), not when
 * the deregistration returned: on {@code ucx} a put the peer issued before the connection ended (or before a
 * misbehaving peer released the region) may still land until its REVOKE_ACK.
 *
 * <p><b>Concurrency:</b> {@link #expose} and {@link #requestRevoke} on any thread (they hand the work to
 * the progress thread); the rest on the progress thread.
 */
final class Exposures {
    private final OneSidedEngine engine;
    private final ProtectionDomain pd;
    private final ControlFrames control;
    private final int rails;
    private final Map<Integer, LocalExposure> byId = new HashMap<>();
    /** Registrations made for exposures and not deregistered: what a leak check expects to be 0 after close. */
    private final AtomicInteger registered = new AtomicInteger();
    private int nextId;

    Exposures(OneSidedEngine engine, ProtectionDomain pd, ControlFrames control, int rails) {
        this.engine = engine;
        this.pd = pd;
        this.control = control;
        this.rails = rails;
    }

    Mono<RemoteRegion> expose(MemoryRegion region, long offset, long lengthBytes, RemoteAccess access) {
        return Mono.create(sink -> {
            if (region.protectionDomain() != pd || !region.isValid()) {
                sink.error(new IllegalArgumentException("expose: the region " + (region.isValid() ? "is registered with another node"
                    : "was deregistered") + "; register it with this connection's node (RdmaNode.registerMemory)"));
                return;
            }
            if (offset < 0 || lengthBytes <= 0 || offset + lengthBytes > region.length() || lengthBytes > Integer.MAX_VALUE) {
                sink.error(new IllegalArgumentException("expose: range [" + offset + ", " + (offset + lengthBytes) + ") must be non-empty, "
                    + "inside the region of " + region.length() + " bytes and at most 2^31-1 bytes long"));
                return;
            }
            if (access.allowsAtomic() && !pd.device().capabilities().atomics()) {
                sink.error(new UnsupportedCapabilityException("atomics", "expose: " + access + " grants atomics, but device '"
                    + pd.device().name() + "' has none (DeviceCapabilities.atomics false); expose it without ATOMIC, or run "
                    + "this node on a provider with atomics such as 'soft'"));
                return;
            }
            int flags = Access.LOCAL_WRITE | (access.allowsRead() ? Access.REMOTE_READ : 0) | (access.allowsWrite() ? Access.REMOTE_WRITE : 0)
                | (access.allowsAtomic() ? Access.REMOTE_ATOMIC : 0);
            ByteBuffer view = region.buffer();
            view.limit((int) (offset + lengthBytes)).position((int) offset);
            MemoryRegion registration;
            try {
                registration = pd.registerMemory(view, flags);
            } catch (RuntimeException e) {
                sink.error(e);
                return;
            }
            registered.incrementAndGet();
            engine.submit(new Command() {
                @Override
                public void run() {
                    int id = nextId++;
                    LocalExposure exposure = new LocalExposure(engine, id, registration, access);
                    byId.put(id, exposure);
                    int[] rkeys = new int[rails];
                    java.util.Arrays.fill(rkeys, registration.rkey());
                    long address = registration.address();
                    control.send(ControlFrames.ANY_RAIL, FrameType.REGION_EXPOSE,
                        (b, off, credits) -> RegionExposeFrameCodec.encode(b, off, id, credits, address, lengthBytes, access.wireBits(), rkeys),
                        () -> sink.success(exposure));
                }

                @Override
                public void fail(Throwable error) {
                    deregister(registration);
                    sink.error(error);
                }
            });
        });
    }

    /** Any thread: the owner revokes {@code exposure}; the user is told, and its release deregisters it. */
    void requestRevoke(LocalExposure exposure) {
        engine.submit(() -> {
            if (!exposure.revokeSent() && byId.get(exposure.id()) == exposure) {
                exposure.revokeSent(true);
                int id = exposure.id();
                control.send(ControlFrames.ANY_RAIL, FrameType.REGION_REVOKE,
                    (b, off, credits) -> RegionRevokeFrameCodec.encode(b, off, id, credits, true), () -> { });
            }
        });
    }

    /** The user released region {@code id}: no RDMA of it can reach the region any more. @return false if no such region is exposed */
    boolean onRelease(int id) {
        LocalExposure exposure = byId.remove(id);
        if (exposure == null) {
            return false;
        }
        release(exposure);
        return true;
    }

    private void release(LocalExposure exposure) {
        exposure.deregistered(deregister(exposure.registration()));
    }

    /**
     * Deregisters without blocking the progress thread; the stage completes once no RDMA of the peer can
     * reach the memory any more ({@link MemoryRegion#deregisterAsync()}: at once on most providers, once
     * the peers acknowledged the rkey's revocation on {@code ucx}, whose deregistration on the thread
     * driving it could not wait for that).
     */
    private CompletionStage<Void> deregister(MemoryRegion registration) {
        if (!registration.isValid()) {
            return CompletableFuture.completedFuture(null);
        }
        CompletionStage<Void> outOfReach = registration.deregisterAsync();
        registered.decrementAndGet();
        return outOfReach;
    }

    /** The connection ended: every exposure's registration is deregistered. */
    void terminate() {
        for (LocalExposure e : new ArrayList<>(byId.values())) {
            release(e);
        }
        byId.clear();
    }

    /** Registrations of exposures not deregistered (any thread). */
    int registered() {
        return registered.get();
    }

    /** Exposures the user has not released (progress thread). */
    int exposed() {
        return byId.size();
    }
}
