package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftFrame;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;

/**
 * The requester side of the put path: an RDMA WRITE whose target region's UCX rkey this route holds
 * goes as {@code ucp_put} ({@code putNonBlocking}) straight into the responder's memory, and only its
 * 64-byte header travels as an active message ({@link UcxFrameTransport#AM_ID_PLACED}: "payload
 * already placed"), for the responder NIC to check rkey, bounds, access and PSN and acknowledge as any
 * WRITE, copying nothing ({@link SoftFrame#payloadPlaced}).
 *
 * <h2>Ordering</h2>
 * UCX does not order an RMA against an active message on one endpoint. So a WRITE's header, and every
 * frame the route transmits after it (a SEND, an ACK, the next WRITE's header), is held in the route's
 * queue; at the end of the engine pass ({@link #flush}) the route's endpoint is flushed
 * ({@code flushNonBlocking}), and in that flush's completion (the puts are then complete at the target)
 * the queue drains in transmission order. So a SEND posted after a WRITE is delivered after the WRITE's
 * data is in place, as RC requires; WRITE_WITH_IMM is put + flush + header carrying the immediate.
 *
 * <h2>Which WRITEs</h2>
 * A WRITE goes as a put only when all hold: the route holds a REPLY for its rkey ({@link UcxRkeyMessages};
 * the first WRITE with an rkey goes as frames and asks for it), the target range lies inside the
 * advertised region and the region has REMOTE_WRITE, it has a payload of direct buffers, and it is
 * the first transmission of its PSN (its PSN is later than every request the route sent before): a
 * retransmission goes as frames, which the responder places only if it never executed that PSN, so a
 * late retransmission never overwrites what the responder's application wrote since. Anything else goes as frames, so an unknown, refused or revoked rkey
 * still completes REM_ACCESS_ERR at the responder exactly as before. A responder-side refusal of a
 * put's header (its QP left RTR/RTS, or the region was deregistered while the put flew) still completes
 * REM_ACCESS_ERR, but the bytes were placed: see the README.
 *
 * <h2>READs as gets</h2>
 * A READ request of more than {@link #GET_MIN_EXCLUSIVE} bytes whose route holds a usable key with
 * REMOTE_READ, inside the bounds, first transmission, goes as a header on
 * {@link UcxFrameTransport#AM_ID_PLACED}: the responder NIC handles it as any READ, in PSN order, and its
 * response goes header-only ({@link UcxGetPath#servedByGet}); the requester then fetches the data with
 * {@code ucp_get} and hands the response, with the data as its payload, to its NIC
 * ({@link UcxGetPath#expectGet}).
 *
 * <p>Its per-route state lies in each {@link UcxRoute}; the routes themselves, and their ids, are
 * {@link UcxRoutes}'. Owns the unpacked rkeys and the flushes in flight (released by {@link #close}).
 *
 * <p><b>Concurrency:</b> engine thread only.
 */
final class UcxPutPath {
    /**
     * READs of at most this many bytes (4 KiB, {@link SoftFrame#MAX_OWN_PAYLOAD}) stay frames: their response
     * fits the frame's own buffer, and as gets they measured 0.7–0.85x the frames' bandwidth over {@code sm}
     * (the extra header round before the get); from 8 KiB up the get path measured faster (README).
     */
    static final int GET_MIN_EXCLUSIVE = SoftFrame.MAX_OWN_PAYLOAD;

    private final UcxRoutes routes;
    private final UcxSender sender;
    private final UcxGetPath getPath;
    /** This NIC's tag in rkey messages ({@link UcxRkeyMessages}): tells its routes from another requester's. */
    private final long tag;
    private final UcpRequestParams hostMemory;
    /** Routes with puts not yet covered by a started flush. */
    private final ArrayList<UcxRoute> unflushed = new ArrayList<>();
    /** Routes whose flush completed (drained after progress returns). */
    private final ArrayDeque<UcxRoute> flushed = new ArrayDeque<>();
    /** Rkey messages received in callbacks, handled after progress returns. */
    private final ArrayDeque<Received> received = new ArrayDeque<>();
    private final List<UcpRequest> flushRequests = new ArrayList<>();
    /** Provider option {@code put}: set at setup (volatile: the setup thread is not the engine). */
    private volatile boolean enabled = true;
    private long puts;
    private long putBytes;
    private long gets;
    private long getBytes;
    private long rkeyRequests;
    private long rkeysReceived;

    /** {@code routes} gives the ids (they travel in REQUESTs and come back in REPLY/REFUSED/REVOKE). */
    UcxPutPath(UcxRoutes routes, UcxSender sender, UcxGetPath getPath, long tag, UcpRequestParams hostMemory) {
        this.routes = routes;
        this.sender = sender;
        this.getPath = getPath;
        this.tag = tag;
        this.hostMemory = hostMemory;
    }

    void enabled(boolean on) {
        this.enabled = on;
    }

    boolean enabled() {
        return enabled;
    }

    /** WRITEs sent as puts so far. */
    long puts() {
        return puts;
    }

    /** RDMA READs fetched with {@code ucp_get} (requests sent so) so far. */
    long gets() {
        return gets;
    }

    /** Bytes of RDMA READs fetched with {@code ucp_get} so far. */
    long getBytes() {
        return getBytes;
    }

    /** Bytes sent as puts so far. */
    long putBytes() {
        return putBytes;
    }

    /** Usable rkeys (REPLYs unpacked) so far. */
    long rkeysReceived() {
        return rkeysReceived;
    }

    /** Rkey REQUESTs sent so far. */
    long rkeyRequests() {
        return rkeyRequests;
    }

    /**
     * Transmits {@code f} on {@code r}: as puts plus a held header when it qualifies, held behind earlier
     * held frames, or at once.
     */
    void transmit(SoftFrame f, UcxRoute r, UcpEndpoint ep) {
        boolean firstTransmission = true;
        FrameType t = f.type;
        if (t == FrameType.SEND || t == FrameType.RDMA_WRITE || t == FrameType.RDMA_READ_REQUEST
            || t == FrameType.ATOMIC_FETCH_ADD || t == FrameType.ATOMIC_CMP_SWAP) {
            firstTransmission = !r.anyRequest || psnDiff(f.psn, r.highestRequestPsn) > 0;
            if (firstTransmission) {
                r.anyRequest = true;
                r.highestRequestPsn = f.psn;
            }
        }
        if (t == FrameType.RDMA_WRITE && f.length > 0 && firstTransmission && enabled && put(f, r, ep)) {
            f.payloadPlaced = true;
            r.held.add(new Held(f, r.flushesStarted + 1, 0));
            return;
        }
        if (t == FrameType.RDMA_READ_REQUEST && f.length > GET_MIN_EXCLUSIVE && firstTransmission && enabled && get(f, r, ep)) {
            // sent as a header on AM_ID_PLACED: "the requester fetches the data itself"
            f.payloadPlaced = true;
        } else if (t == FrameType.RDMA_READ_RESPONSE && f.length > 0 && getPath.servedByGet(f.sourceQpn, f.psn)) {
            // the requester asked to fetch it with ucp_get: only the header goes
            f.payloadPlaced = true;
        }
        if (!r.held.isEmpty()) {
            r.held.add(new Held(f, 0, 0));
            return;
        }
        sender.send(f, r, ep, f.payloadPlaced);
    }

    /** The route's knowledge of {@code f}'s rkey; asks the responder for it (REQUEST) the first time. */
    private @Nullable Remote remote(SoftFrame f, UcxRoute r, UcpEndpoint ep) {
        Remote remote = r.rkeys.get(f.rkey);
        if (remote == null) {
            r.rkeys.put(f.rkey, Remote.ASKED);
            rkeyRequests++;
            sender.sendRkeyMessage(ep, UcxRkeyMessages.header(UcxRkeyMessages.REQUEST, r.id, f.rkey, f.destinationQpn, tag, 0), null, true, null);
        }
        return remote;
    }

    /**
     * An RDMA READ request whose route holds a usable key with REMOTE_READ, inside the advertised bounds:
     * recorded so that the responder's header-only response starts a {@code ucp_get} of the data
     * ({@link UcxGetPath#expectGet}); the request itself still goes to the responder NIC, which checks
     * and orders it as any READ and answers once every earlier request of the QP was executed.
     */
    private boolean get(SoftFrame f, UcxRoute r, UcpEndpoint ep) {
        Remote remote = remote(f, r, ep);
        if (remote == null || remote.key == null || (remote.access & Access.REMOTE_READ) == 0 || f.remoteAddress < remote.address
            || f.remoteAddress - remote.address > remote.length - f.length) {
            return false;
        }
        getPath.expectGet(f.sourceQpn, f.psn, new UcxGetPath.PendingGet(r, ep, remote.key, f.rkey, f.remoteAddress, f.length));
        gets++;
        getBytes += f.length;
        return true;
    }

    private boolean put(SoftFrame f, UcxRoute r, UcpEndpoint ep) {
        Remote remote = remote(f, r, ep);
        if (remote == null) {
            return false;
        }
        UcpRemoteKey key = remote.key;
        if (key == null || (remote.access & Access.REMOTE_WRITE) == 0 || f.remoteAddress < remote.address
            || f.remoteAddress - remote.address > remote.length - f.length) {
            return false;
        }
        for (int i = 0; i < f.payloadCount; i++) {
            if (!f.payloadBuffers[i].isDirect()) {
                return false;
            }
        }
        long target = f.remoteAddress;
        for (int i = 0; i < f.payloadCount; i++) {
            int len = f.payloadLengths[i];
            if (len > 0) {
                ep.putNonBlocking(UcxUtils.getAddress(f.payloadBuffers[i]) + f.payloadOffsets[i], len, target, key, null, hostMemory);
                target += len;
            }
        }
        puts++;
        putBytes += f.length;
        if (!r.putsSinceFlush) {
            r.putsSinceFlush = true;
            unflushed.add(r);
        }
        return true;
    }

    static int psnDiff(int a, int b) {
        return ((a - b) << 8) >> 8;
    }

    /** End of an engine pass: flushes each route with puts not yet covered (one flush in flight per route). */
    void flush() {
        for (int i = unflushed.size() - 1; i >= 0; i--) {
            UcxRoute r = unflushed.get(i);
            if (r.flushing) {
                continue;
            }
            unflushed.remove(i);
            r.putsSinceFlush = false;
            UcpEndpoint ep = r.endpoint;
            if (ep == null || r.failed) {
                continue;
            }
            r.flushing = true;
            long number = ++r.flushesStarted;
            UcxCallback done = new UcxCallback() {
                @Override
                public void onSuccess(UcpRequest request) {
                    r.flushing = false;
                    r.flushesDone = Math.max(r.flushesDone, number);
                    flushed.add(r);
                }

                @Override
                public void onError(int status, String message) {
                    r.flushing = false;
                    routes.failed(r, "UCX flush of puts to " + r.destination() + " failed (status " + status + "): " + message);
                    flushed.add(r);
                }
            };
            try {
                UcpRequest req = ep.flushNonBlocking(done);
                if (req != null && !req.isCompleted()) {
                    flushRequests.add(req);
                }
            } catch (RuntimeException e) {
                done.onError(-1, e.getMessage());
            }
        }
    }

    /** Engine, inside a UCX callback: an rkey message for this NIC as requester. */
    void receivedMessage(int kind, int routeId, int rkey, int access, long address, long length, @Nullable ByteBuffer packed) {
        received.add(new Received(kind, routeId, rkey, access, address, length, packed));
    }

    /** Engine, after {@code progress()} returned: handles rkey messages and drains routes whose flush completed. */
    void afterProgress() {
        Received m;
        while ((m = received.poll()) != null) {
            if (m.routeId < 0 || m.routeId >= routes.size()) {
                continue;
            }
            UcxRoute r = routes.byId(m.routeId);
            if (r.failed || r.endpoint == null) {
                continue;
            }
            Remote old = r.rkeys.get(m.rkey);
            switch (m.kind) {
                case UcxRkeyMessages.REPLY -> {
                    if (old == Remote.ASKED) {
                        UcpRemoteKey key;
                        try {
                            key = r.endpoint.unpackRemoteKey(m.packed);
                        } catch (RuntimeException e) {
                            r.rkeys.put(m.rkey, Remote.REFUSED);
                            continue;
                        }
                        r.rkeys.put(m.rkey, new Remote(key, m.access, m.address, m.length));
                        rkeysReceived++;
                    }
                }
                case UcxRkeyMessages.REFUSED -> r.rkeys.put(m.rkey, Remote.REFUSED);
                case UcxRkeyMessages.REVOKE -> {
                    r.rkeys.put(m.rkey, Remote.REFUSED);
                    if (old != null && old.key != null) {
                        // kept until the route closes: a get may still be started with it in this pass
                        r.retiredKeys.add(old.key);
                    }
                    getPath.dropPendingGets(r, m.rkey);
                    // acknowledged once every put issued so far on this route completed: behind the next flush
                    r.held.add(new Held(null, r.flushesStarted + 1, m.rkey));
                    if (!r.putsSinceFlush) {
                        r.putsSinceFlush = true;
                        unflushed.add(r);
                    }
                }
                default -> {
                }
            }
        }
        flushRequests.removeIf(UcpRequest::isCompleted);
        UcxRoute r;
        while ((r = flushed.poll()) != null) {
            drain(r);
        }
    }

    /** Sends the route's held frames, in order, up to the first whose puts no completed flush covers. */
    private void drain(UcxRoute r) {
        Held h;
        while ((h = r.held.peek()) != null && h.needsFlush <= r.flushesDone) {
            r.held.poll();
            UcpEndpoint ep = r.endpoint;
            if (h.frame == null) {
                if (ep != null && !r.failed) {
                    sender.sendRkeyMessage(ep, UcxRkeyMessages.header(UcxRkeyMessages.REVOKE_ACK, r.id, h.revokedRkey, 0, tag, 0), null, false, null);
                }
            } else if (ep == null || r.failed) {
                h.frame.release();
            } else {
                sender.send(h.frame, r, ep, h.frame.payloadPlaced);
            }
        }
    }

    /** The route failed: its held frames are dropped (the NIC fails its QPs). */
    void failed(UcxRoute r) {
        Held h;
        while ((h = r.held.poll()) != null) {
            if (h.frame != null) {
                h.frame.release();
            }
        }
    }

    /** At close: cancels flushes in flight (with {@code cancel}), releases held frames, destroys unpacked keys. */
    void close(Consumer<UcpRequest> cancel) {
        for (UcpRequest req : flushRequests) {
            if (!req.isCompleted()) {
                cancel.accept(req);
            }
        }
        flushRequests.clear();
        for (int i = 0; i < routes.size(); i++) {
            UcxRoute r = routes.byId(i);
            failed(r);
            for (Remote remote : r.rkeys.values()) {
                if (remote.key != null) {
                    remote.key.close();
                }
            }
            r.rkeys.clear();
            for (UcpRemoteKey k : r.retiredKeys) {
                k.close();
            }
            r.retiredKeys.clear();
        }
    }

    /** Whether any flush is still in flight (close progresses until none is). */
    boolean flushesInFlight() {
        flushRequests.removeIf(UcpRequest::isCompleted);
        return !flushRequests.isEmpty();
    }

    /** A frame (or, with a null frame, a REVOKE_ACK for {@code revokedRkey}) waiting for flush {@code needsFlush}. */
    record Held(@Nullable SoftFrame frame, long needsFlush, int revokedRkey) {
    }

    /** What a route knows of one rkey of its peer: a usable key, or asked (no answer yet), or refused. */
    static final class Remote {
        static final Remote ASKED = new Remote(null, 0, 0, 0);
        static final Remote REFUSED = new Remote(null, 0, 0, 0);

        final @Nullable UcpRemoteKey key;
        final int access;
        final long address;
        final long length;

        Remote(@Nullable UcpRemoteKey key, int access, long address, long length) {
            this.key = key;
            this.access = access;
            this.address = address;
            this.length = length;
        }
    }

    private record Received(int kind, int routeId, int rkey, int access, long address, long length, @Nullable ByteBuffer packed) {
    }

    static Map<Integer, Remote> newCache() {
        return new HashMap<>();
    }
}
