package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 * ({@link SoftDevice#remoteRegion}) with REMOTE_WRITE; only then is it packed and sent (REPLY). So
 * regions never written remotely cost nothing, and UCX is touched only by the engine thread. A
 * deregistration ({@link #deregistered}, any thread) is queued; the engine then sends REVOKE to every
 * route that got the key and keeps the memory mapped, and the region's buffer reachable, until each
 * answered REVOKE_ACK (sent once its puts with that key completed), so a put racing the revoke never
 * lands in memory the JVM freed. A route that breaks before acknowledging keeps its region mapped until
 * the attachment closes.
 *
 * <p><b>Concurrency:</b> engine thread only, except {@link #deregistered} (any thread).
 */
final class UcxRegionExports {
    private final UcxAttachment attachment;
    private final SoftDevice nic;
    private final UcpContext context;
    private final Map<Integer, Export> exports = new HashMap<>();
    /** Revoked exports waiting for REVOKE_ACKs, by rkey. */
    private final Map<Integer, Export> retiring = new HashMap<>();
    private final ConcurrentLinkedQueue<Integer> deregistered = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Request> requests = new ArrayDeque<>();
    private final ArrayDeque<Integer> acks = new ArrayDeque<>();
    private long regionsMapped;
    private long revokesSent;

    UcxRegionExports(UcxAttachment attachment, SoftDevice nic, UcpContext context) {
        this.attachment = attachment;
        this.nic = nic;
        this.context = context;
    }

    /** Engine, inside a UCX callback: a REQUEST arrived; answered after progress returns. */
    void requested(UcpEndpoint replyEp, int routeId, int rkey, int qpn) {
        requests.add(new Request(replyEp, routeId, rkey, qpn));
    }

    /** Engine, inside a UCX callback: a REVOKE_ACK for {@code rkey} arrived. */
    void acknowledged(int rkey) {
        acks.add(rkey);
    }

    /** Any thread: the NIC dropped {@code region}'s keys. */
    void deregistered(MemoryRegion region) {
        if ((region.access() & Access.REMOTE_WRITE) != 0) {
            deregistered.add(region.rkey());
        }
    }

    /** Whether deregistrations wait for the engine (it then runs {@link #afterProgress} soon). */
    boolean hasDeregistrations() {
        return !deregistered.isEmpty();
    }

    /** Engine, after {@code progress()} returned: answers requests, sends revokes, unmaps acknowledged regions. */
    void afterProgress() {
        Request q;
        while ((q = requests.poll()) != null) {
            answer(q);
        }
        Integer rkey;
        while ((rkey = deregistered.poll()) != null) {
            revoke(rkey);
        }
        while ((rkey = acks.poll()) != null) {
            Export e = retiring.get(rkey);
            if (e != null && --e.unacknowledged <= 0) {
                retiring.remove(rkey);
                e.unmap();
            }
        }
    }

    private void answer(Request q) {
        MemoryRegion mr = nic.remoteRegion(q.qpn, q.rkey);
        Export e = null;
        if (mr != null && (mr.access() & Access.REMOTE_WRITE) != 0) {
            e = exports.get(q.rkey);
            if (e == null) {
                e = map(mr);
                if (e != null) {
                    exports.put(q.rkey, e);
                }
            }
        }
        if (e == null) {
            attachment.sendRkeyMessage(q.replyEp, UcxRkeyMessages.header(UcxRkeyMessages.REFUSED, q.routeId, q.rkey, 0, 0, 0), null, false);
            return;
        }
        e.subscribers.add(q.replyEp);
        e.routeIds.add(q.routeId);
        attachment.sendRkeyMessage(q.replyEp,
            UcxRkeyMessages.header(UcxRkeyMessages.REPLY, q.routeId, q.rkey, e.access, e.address, e.length), e.packed, false);
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
        return new Export(memory, keep, packed, mr.access(), mr.address(), mr.length());
    }

    private void revoke(int rkey) {
        Export e = exports.remove(rkey);
        if (e == null) {
            return;
        }
        for (int i = 0; i < e.subscribers.size(); i++) {
            attachment.sendRkeyMessage(e.subscribers.get(i),
                UcxRkeyMessages.header(UcxRkeyMessages.REVOKE, e.routeIds.get(i), rkey, 0, 0, 0), null, false);
            revokesSent++;
        }
        e.unacknowledged = e.subscribers.size();
        e.subscribers.clear();
        if (e.unacknowledged == 0) {
            e.unmap();
        } else {
            retiring.put(rkey, e);
        }
    }

    /** Regions mapped with UCX so far. */
    long regionsMapped() {
        return regionsMapped;
    }

    /** REVOKE messages sent so far. */
    long revokesSent() {
        return revokesSent;
    }

    /** Regions mapped now (exported or waiting for acknowledgements). */
    int mappedNow() {
        return exports.size() + retiring.size();
    }

    /** At close, after every request was finished or cancelled: unmaps everything. */
    void close() {
        for (Export e : exports.values()) {
            e.unmap();
        }
        for (Export e : retiring.values()) {
            e.unmap();
        }
        exports.clear();
        retiring.clear();
        requests.clear();
    }

    private record Request(UcpEndpoint replyEp, int routeId, int rkey, int qpn) {
    }

    private static final class Export {
        final UcpMemory memory;
        /** Keeps the region's memory reachable while UCX maps it. */
        ByteBuffer keep;
        final ByteBuffer packed;
        final int access;
        final long address;
        final long length;
        final List<UcpEndpoint> subscribers = new ArrayList<>();
        final List<Integer> routeIds = new ArrayList<>();
        int unacknowledged;

        Export(UcpMemory memory, ByteBuffer keep, ByteBuffer packed, int access, long address, long length) {
            this.memory = memory;
            this.keep = keep;
            this.packed = packed;
            this.access = access;
            this.address = address;
            this.length = length;
        }

        void unmap() {
            memory.deregister();
            keep = null;
        }
    }
}
