package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemMapParams;
import org.openucx.jucx.ucp.UcpMemory;

/**
 * The responder side of the put path ({@link UcxPutPath} is the requester's): which of this NIC's
 * memory regions are mapped with UCX ({@code ucp_mem_map}) and whose packed rkeys went to which
 * requesters' routes.
 *
 * <p>A region is mapped lazily, on the engine thread, when a peer's route first asks for its rkey
 * (REQUEST, {@link UcxRkeyMessages}) and the NIC says the peer's QP may target it
 * ({@link SoftDevice#remoteRegion}) with REMOTE_WRITE or REMOTE_READ (puts and gets); only then is it packed and sent (REPLY). So
 * regions never written remotely cost nothing, and UCX is touched only by the engine thread.
 *
 * <h2>Revocation</h2>
 * A deregistration ({@link #deregistered}, any thread) is queued as a {@link Revocation}; the engine
 * sends REVOKE to every route that got the key (each a <i>subscriber</i>) and keeps the memory mapped,
 * and the region's buffer reachable, until every subscriber is settled: it answered REVOKE_ACK (sent
 * once its puts with that key completed, after which it never puts with it again), or it is gone
 * (the responder's route to it failed, its REVOKE could not be sent, or, in this JVM, its NIC closed).
 * Then the region is unmapped and the revocation completes; the deregistering thread waits for that
 * ({@link UcxDeregistrationWait}), so once deregistration returns no put with the old key
 * lands, as after {@code ibv_dereg_mr}. A subscriber still unsettled {@link #revokeTimeoutNs} after the
 * REVOKE went is taken for failed: the responder fails its route to it (RETRY_EXC_ERR on the queue
 * pairs there) and closes that endpoint where UCX allows ({@link UcxRoutes#revocationUnacknowledged});
 * its region stays mapped and reachable until the NIC closes (a put from a live but silent peer over
 * shared memory still lands in memory the JVM has not freed).
 *
 * <p><b>Concurrency:</b> engine thread only, except {@link #deregistered} and {@link #revokeTimeoutNs(long)} (any thread).
 */
final class UcxRegionExports {
    /** Default bound of a revocation, ns (1 s): a live peer answers within a round trip and a flush. */
    static final long DEFAULT_REVOKE_TIMEOUT_NS = 1_000_000_000L;

    private final UcxSender sender;
    private final UcxRoutes routes;
    private final SoftDevice nic;
    private final UcpContext context;
    private final Map<Integer, Export> exports = new HashMap<>();
    /** Revoked exports waiting for their subscribers. */
    private final List<Export> retiring = new ArrayList<>();
    /** Revoked exports a subscriber never acknowledged: mapped until close. */
    private final List<Export> abandoned = new ArrayList<>();
    /**
     * Rkeys exported or being answered (engine writes, any thread reads): a deregistration waits only for
     * these. Added before the engine checks the region's validity, so a deregistration racing a REQUEST
     * either sees the rkey here (and waits) or makes the check fail (and the REQUEST is refused).
     */
    private final Set<Integer> exportedRkeys = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<Revocation> deregistered = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Request> requests = new ArrayDeque<>();
    private final ArrayDeque<Ack> acks = new ArrayDeque<>();
    private volatile long revokeTimeoutNs = DEFAULT_REVOKE_TIMEOUT_NS;
    private long regionsMapped;
    private long revokesSent;
    private long revocationsTimedOut;

    UcxRegionExports(UcxSender sender, UcxRoutes routes, SoftDevice nic, UcpContext context) {
        this.sender = sender;
        this.routes = routes;
        this.nic = nic;
        this.context = context;
    }

    /** Any thread (setup): the bound of a revocation, ns. */
    void revokeTimeoutNs(long ns) {
        this.revokeTimeoutNs = ns;
    }

    long revokeTimeoutNs() {
        return revokeTimeoutNs;
    }

    /** Engine, inside a UCX callback: a REQUEST arrived; answered after progress returns. */
    void requested(UcpEndpoint replyEp, long tag, int routeId, int rkey, int qpn) {
        requests.add(new Request(replyEp, tag, routeId, rkey, qpn));
    }

    /** Engine, inside a UCX callback: a REVOKE_ACK from the requester {@code tag}'s route {@code routeId}. */
    void acknowledged(long tag, int routeId, int rkey) {
        acks.add(new Ack(tag, routeId, rkey));
    }

    /**
     * Any thread: the NIC dropped {@code region}'s keys. Queues the revocation and returns it when the
     * region may have been handed to a peer (the caller then waits for it), else null.
     */
    @Nullable Revocation deregistered(MemoryRegion region) {
        if ((region.access() & (Access.REMOTE_WRITE | Access.REMOTE_READ)) == 0) {
            return null;
        }
        Revocation rv = new Revocation(region.rkey());
        deregistered.add(rv);
        return exportedRkeys.contains(region.rkey()) ? rv : null;
    }

    /** Whether deregistrations wait for the engine (it then runs {@link #afterProgress} soon). */
    boolean hasDeregistrations() {
        return !deregistered.isEmpty();
    }

    /** Engine, after {@code progress()} returned: answers requests, sends revokes, settles revoked regions. */
    void afterProgress(long nowNs) {
        Request q;
        while ((q = requests.poll()) != null) {
            answer(q);
        }
        Revocation rv;
        while ((rv = deregistered.poll()) != null) {
            revoke(rv, nowNs);
        }
        Ack a;
        while ((a = acks.poll()) != null) {
            acknowledge(a);
        }
        for (int i = retiring.size() - 1; i >= 0; i--) {
            if (settle(retiring.get(i), nowNs)) {
                retiring.remove(i);
            }
        }
    }

    private void answer(Request q) {
        Export e = exports.get(q.rkey);
        if (e == null) {
            exportedRkeys.add(q.rkey);
            MemoryRegion mr = nic.remoteRegion(q.qpn, q.rkey);
            if (mr != null && (mr.access() & (Access.REMOTE_WRITE | Access.REMOTE_READ)) != 0) {
                e = map(mr);
                if (e != null) {
                    exports.put(q.rkey, e);
                }
            }
            if (e == null) {
                exportedRkeys.remove(q.rkey);
            }
        } else if (nic.remoteRegion(q.qpn, q.rkey) == null) {
            e = null;
        }
        if (e == null) {
            sender.sendRkeyMessage(q.replyEp, UcxRkeyMessages.header(UcxRkeyMessages.REFUSED, q.routeId, q.rkey, 0, q.tag, 0), null,
                false, null);
            return;
        }
        Route route = nic.queuePairRoute(q.qpn);
        e.subscribers.add(new Subscriber(q.replyEp, q.tag, q.routeId, route instanceof UcxRoute r ? r : null));
        sender.sendRkeyMessage(q.replyEp,
            UcxRkeyMessages.header(UcxRkeyMessages.REPLY, q.routeId, q.rkey, e.access, e.address, e.length), e.packed, false, null);
    }

    private Export map(MemoryRegion mr) {
        ByteBuffer keep;
        try {
            keep = mr.buffer();
        } catch (RuntimeException deregisteredMeanwhile) {
            return null;
        }
        UcpMemory memory;
        try {
            memory = context.memoryMap(new UcpMemMapParams().setAddress(mr.address()).setLength(mr.length()));
        } catch (RuntimeException e) {
            return null;
        }
        ByteBuffer packedByUcx = memory.getRemoteKeyBuffer();
        if (packedByUcx.remaining() > UcxRkeyMessages.MAX_PACKED) {
            memory.deregister();
            return null;
        }
        ByteBuffer packed = ByteBuffer.allocateDirect(packedByUcx.remaining());
        packed.put(0, packedByUcx, packedByUcx.position(), packedByUcx.remaining());
        regionsMapped++;
        return new Export(mr.rkey(), memory, keep, packed, mr.access(), mr.address(), mr.length());
    }

    private void revoke(Revocation rv, long nowNs) {
        rv.pickedUp();
        Export e = exports.remove(rv.rkey);
        if (e == null) {
            exportedRkeys.remove(rv.rkey);
            rv.complete();
            return;
        }
        e.revocation = rv;
        e.deadlineNs = nowNs + revokeTimeoutNs;
        for (Subscriber s : e.subscribers) {
            sender.sendRkeyMessage(s.replyEp, UcxRkeyMessages.header(UcxRkeyMessages.REVOKE, s.routeId, rv.rkey, 0, s.tag, 0), null,
                false, () -> s.gone = true);
            revokesSent++;
        }
        retiring.add(e);
        settle(e, nowNs);
    }

    private void acknowledge(Ack a) {
        for (Export e : retiring) {
            if (e.rkey != a.rkey) {
                continue;
            }
            for (Subscriber s : e.subscribers) {
                if (!s.acknowledged && s.tag == a.tag && s.routeId == a.routeId) {
                    s.acknowledged = true;
                    return;
                }
            }
        }
    }

    /** Whether every subscriber of the revoked {@code e} is settled (then it is unmapped or abandoned and its revocation completes). */
    private boolean settle(Export e, long nowNs) {
        boolean timedOut = nowNs - e.deadlineNs >= 0;
        boolean abandon = false;
        for (Subscriber s : e.subscribers) {
            if (s.acknowledged || s.gone) {
                continue;
            }
            if (s.route != null && routes.peerGone(s.route)) {
                s.gone = true;
                continue;
            }
            if (!timedOut) {
                return false;
            }
            abandon = true;
            routes.revocationUnacknowledged(s.route, e.rkey, revokeTimeoutNs);
        }
        if (abandon) {
            revocationsTimedOut++;
            abandoned.add(e);
        } else {
            e.unmap();
        }
        exportedRkeys.remove(e.rkey);
        e.revocation.complete();
        return true;
    }

    /** Regions mapped with UCX so far. */
    long regionsMapped() {
        return regionsMapped;
    }

    /** REVOKE messages sent so far. */
    long revokesSent() {
        return revokesSent;
    }

    /** Revocations that timed out (a subscriber neither acknowledged nor was seen gone) so far. */
    long revocationsTimedOut() {
        return revocationsTimedOut;
    }

    /** Regions mapped now (exported, waiting for acknowledgements, or abandoned by a silent peer). */
    int mappedNow() {
        return exports.size() + retiring.size() + abandoned.size();
    }

    /** At close, after every request was finished or cancelled: unmaps everything and releases every waiting deregistration. */
    void close() {
        for (Export e : exports.values()) {
            e.unmap();
        }
        for (Export e : retiring) {
            e.unmap();
            e.revocation.complete();
        }
        for (Export e : abandoned) {
            e.unmap();
        }
        Revocation rv;
        while ((rv = deregistered.poll()) != null) {
            rv.complete();
        }
        exports.clear();
        retiring.clear();
        abandoned.clear();
        exportedRkeys.clear();
        requests.clear();
    }

    /** A deregistration waiting for its region's revocation (completed by the engine, or at close). */
    static final class Revocation {
        final int rkey;
        private final CountDownLatch done = new CountDownLatch(1);
        private final CountDownLatch picked = new CountDownLatch(1);
        /** Completed with {@link #done}, after it (dependent actions run on the completing thread: the engine's, or the closing one). */
        private final CompletableFuture<Void> completion = new CompletableFuture<>();

        Revocation(int rkey) {
            this.rkey = rkey;
        }

        void complete() {
            picked.countDown();
            done.countDown();
            completion.complete(null);
        }

        /** Completes once the revocation is settled (or the NIC closed); never exceptionally. */
        CompletionStage<Void> completion() {
            return completion;
        }

        /** Engine: it took the revocation up (sent its REVOKEs, or found nothing to revoke). */
        void pickedUp() {
            picked.countDown();
        }

        /** Waits up to {@code ns} for the engine to take the revocation up; returns whether it did. */
        boolean awaitPickup(long ns) throws InterruptedException {
            return picked.await(ns, TimeUnit.NANOSECONDS);
        }

        boolean isDone() {
            return done.getCount() == 0;
        }

        /** Waits up to {@code ns}; returns whether the revocation completed. */
        boolean await(long ns) throws InterruptedException {
            return done.await(ns, TimeUnit.NANOSECONDS);
        }
    }

    private record Request(UcpEndpoint replyEp, long tag, int routeId, int rkey, int qpn) {
    }

    private record Ack(long tag, int routeId, int rkey) {
    }

    /** A requester's route that got the key: {@code tag} names the requester's NIC, {@code routeId} its route. */
    private static final class Subscriber {
        final UcpEndpoint replyEp;
        final long tag;
        final int routeId;
        /** This NIC's route to the requester (the responder QP's), when known: its failure settles the subscriber. */
        final @Nullable UcxRoute route;
        boolean acknowledged;
        /** Set in a send callback (engine thread) or by {@link #settle}. */
        boolean gone;

        Subscriber(UcpEndpoint replyEp, long tag, int routeId, @Nullable UcxRoute route) {
            this.replyEp = replyEp;
            this.tag = tag;
            this.routeId = routeId;
            this.route = route;
        }
    }

    private static final class Export {
        final int rkey;
        final UcpMemory memory;
        /** Keeps the region's memory reachable while UCX maps it. */
        ByteBuffer keep;
        final ByteBuffer packed;
        final int access;
        final long address;
        final long length;
        final List<Subscriber> subscribers = new ArrayList<>();
        Revocation revocation;
        long deadlineNs;
        private boolean unmapped;

        Export(int rkey, UcpMemory memory, ByteBuffer keep, ByteBuffer packed, int access, long address, long length) {
            this.rkey = rkey;
            this.memory = memory;
            this.keep = keep;
            this.packed = packed;
            this.access = access;
            this.address = address;
            this.length = length;
        }

        void unmap() {
            if (!unmapped) {
                unmapped = true;
                memory.deregister();
                keep = null;
            }
        }
    }
}
