package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.net.NetFrameCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * One soft NIC's view of the {@link UcxFrameTransport}: its UCP worker, its endpoints (one per
 * route, created on the engine thread at first transmit), and the frames that arrived during the
 * last {@code progress()}.
 *
 * <p><b>Receive path:</b> the active-message handler runs inside {@code UcpWorker.progress()} on the
 * engine thread; it decodes the header into a frame from the NIC's pool, copies the payload (UCX's
 * receive buffer is only valid during the callback: releasing persistent data through
 * {@code amDataRelease} crashed Debian's UCX 1.13.1 in our tests), and queues the frame; after
 * {@code progress()} returns, the frames go to {@link SoftDevice#onFrameArrived}, so the NIC never
 * runs inside a UCX callback. <b>Send path:</b> the header is encoded into a pooled 64-byte buffer,
 * the payload is sent from where it lies (one gather entry) or gathered into a staging buffer, and
 * the frame (and its buffers) are released in the send's completion callback.
 *
 * <p><b>Errors:</b> a failed send or an endpoint error (the peer's process died: UCX reports it
 * over {@code tcp}, where endpoints are created in peer-failure mode; shared memory has no such
 * mode, and there the NIC's transport retry timer finds a dead peer) breaks the route: the NIC fails
 * the queue pairs on it with RETRY_EXC_ERR ({@link SoftDevice#routeBroken}).
 *
 * <p><b>Idle wait:</b> {@link #awaitWork} blocks on the worker's event fd ({@link UcxEventWait})
 * when the provider's {@code wait} option is {@code event}.
 *
 * <p><b>Concurrency:</b> engine thread only, except {@link #bind}, {@link #resolve} (setup, any
 * thread; they touch no UCX object), {@link #wakeup()} (any thread: {@code ucp_worker_signal} is
 * thread-safe), {@link #eventWait(boolean)} (setup) and {@link #close} (after the engine stopped).
 */
final class UcxAttachment implements FrameTransport.Attachment {
    private static final int HEADER = NetFrameCodec.HEADER_BYTES;

    private final UcxFrameTransport transport;
    private final SoftDevice nic;
    private final UcpContext context;
    private final UcpWorker worker;
    private final boolean peerFailureMode;
    private final byte[] workerAddress;
    private final UcpRequestParams hostMemory = new UcpRequestParams().setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
    private final ArrayDeque<ByteBuffer> headerPool = new ArrayDeque<>();
    private final ArrayDeque<SoftFrame> arrived = new ArrayDeque<>();
    /** Sends UCX has not completed yet (cancelled on close: UCX aborts on a worker destroyed with requests pending). */
    private final java.util.Set<SendDone> inFlight = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    private final List<UcxRoute> routes = new ArrayList<>();
    private final List<Route> broken = new ArrayList<>();
    private final List<String> brokenReasons = new ArrayList<>();
    private final UcxEventWait eventWait;
    private final UcxPutPath putPath;
    private final UcxRegionExports exports;
    /** Whether {@link #awaitWork} blocks on the worker's event fd (provider option {@code wait=event}). */
    private volatile boolean eventWaitEnabled;
    private long nowNs;
    /** The thread that last ran {@link #poll} (the engine): a deregistration on it must not wait. */
    private volatile @Nullable Thread engineThread;
    /** This NIC's tag in rkey messages ({@link UcxRkeyMessages}): tells its routes from another requester's. */
    private final long tag = new java.security.SecureRandom().nextLong();
    private final java.util.concurrent.atomic.AtomicLong deregistrationsAwaited = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong deregistrationsNotAwaited = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong deregistrationWaitsExpired = new java.util.concurrent.atomic.AtomicLong();
    private long framesRejected;
    private long framesSent;
    private long framesReceived;
    private volatile boolean closed;

    UcxAttachment(UcxFrameTransport transport, SoftDevice nic) {
        this.transport = transport;
        this.nic = nic;
        this.peerFailureMode = UcxEndpoints.peerFailureMode(transport.tls());
        this.context = transport.newContext();
        try {
            // RX and TX wakeup: a blocked engine must also wake when UCX can push out a send it queued
            this.worker = context.newWorker(new UcpWorkerParams().requestWakeupRX().requestWakeupTX());
        } catch (RuntimeException e) {
            context.close();
            throw new VerbsException("UCX could not open a worker for device '" + nic.name() + "': " + e.getMessage(), e);
        }
        try {
            ByteBuffer address = worker.getAddress();
            this.workerAddress = new byte[address.remaining()];
            address.get(address.position(), this.workerAddress);
            worker.setAmRecvHandler(UcxFrameTransport.AM_ID, this::onActiveMessage, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            worker.setAmRecvHandler(UcxFrameTransport.AM_ID_PLACED, this::onPlacedHeader, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            worker.setAmRecvHandler(UcxFrameTransport.AM_ID_RKEY, this::onRkeyMessage, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            this.eventWait = new UcxEventWait(worker, nic.name());
        } catch (RuntimeException e) {
            worker.close();
            context.close();
            throw new VerbsException("UCX could not set up a worker for device '" + nic.name() + "': " + e.getMessage(), e);
        }
        this.putPath = new UcxPutPath(this, hostMemory);
        this.exports = new UcxRegionExports(this, nic, context);
    }

    /** RDMA WRITEs sent as {@code ucp_put} so far ({@link UcxPutPath}); engine thread, or monitoring (may lag). */
    long puts() {
        return putPath.puts();
    }

    /** RDMA READs fetched with {@code ucp_get} so far. */
    long gets() {
        return putPath.gets();
    }

    /** Bytes of RDMA READs fetched with {@code ucp_get} so far. */
    long getBytes() {
        return putPath.getBytes();
    }

    /** Bytes of RDMA WRITEs sent as {@code ucp_put} so far. */
    long putBytes() {
        return putPath.putBytes();
    }

    /** Rkey requests this NIC sent as requester so far. */
    long rkeyRequests() {
        return putPath.rkeyRequests();
    }

    /** Whether WRITEs may go as puts (provider option {@code put}); setup, before traffic. */
    void putPath(boolean enabled) {
        putPath.enabled(enabled && transport.rma());
    }

    boolean putPathEnabled() {
        return putPath.enabled();
    }

    /** Usable rkeys this NIC received as requester so far. */
    long rkeysReceived() {
        return putPath.rkeysReceived();
    }

    /** Memory regions of this NIC mapped with UCX for peers' puts so far ({@link UcxRegionExports}). */
    long regionsMapped() {
        return exports.regionsMapped();
    }

    /** Regions of this NIC mapped with UCX now (exported, or revoked and waiting for acknowledgements). */
    int regionsMappedNow() {
        return exports.mappedNow();
    }

    /** Rkey revocations this NIC sent so far. */
    long revokesSent() {
        return exports.revokesSent();
    }

    /**
     * Any thread: queues the revocation of the region's rkey for the engine, wakes it, and, when the
     * region's key went to peers, waits until every one of them acknowledged the revocation or is gone
     * ({@link UcxRegionExports}), so that no put with the old key lands after this returns, as after
     * {@code ibv_dereg_mr}. The engine settles a revocation within the revoke timeout (failing the routes
     * of peers that stay silent); this thread waits that long plus {@link #REVOKE_WAIT_GRACE_NS} at most.
     * It returns early when the engine does not take the revocation up within {@link #ENGINE_PICKUP_NS}
     * (an INVOKER provider nobody progresses any more, e.g. a node that stopped before releasing its
     * regions): nothing could then acknowledge it; the revocation stays queued, the region mapped and its
     * memory reachable, and the engine finishes it if it runs again.
     *
     * <p>Does not wait on the engine thread (the thread that last progressed this NIC: the provider's
     * own in DEDICATED mode, the caller of {@code progress} in INVOKER mode), which would have to deliver
     * the acknowledgements itself, nor on a closing device: there the revocation completes asynchronously
     * on the engine's next passes, and a put the peer issued before it saw the REVOKE may still land in
     * the region's memory, which stays mapped and reachable (never freed under the put) until then.
     * Counted ({@link #deregistrationsNotAwaited()}).
     */
    @Override
    public void regionDeregistered(io.rdmaflux.verbs.MemoryRegion region) {
        if (closed) {
            return;
        }
        UcxRegionExports.Revocation rv = exports.deregistered(region);
        if (exports.hasDeregistrations()) {
            wakeup();
        }
        if (rv == null) {
            return;
        }
        if (Thread.currentThread() == engineThread || nic.isClosing()) {
            deregistrationsNotAwaited.incrementAndGet();
            return;
        }
        deregistrationsAwaited.incrementAndGet();
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
            deregistrationWaitsExpired.incrementAndGet();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** How much longer than the revoke timeout a deregistration waits for the engine, ns (100 ms). */
    static final long REVOKE_WAIT_GRACE_NS = 100_000_000L;

    /** How long a deregistration waits for the engine to take its revocation up before it deems the engine stopped, ns (50 ms). */
    static final long ENGINE_PICKUP_NS = 50_000_000L;

    /** Setup: the revoke timeout, ns ({@link UcxRegionExports}). */
    void revokeTimeoutNs(long ns) {
        exports.revokeTimeoutNs(ns);
    }

    /** Deregistrations that waited for their revocation so far. */
    long deregistrationsAwaited() {
        return deregistrationsAwaited.get();
    }

    /** Deregistrations of exported regions that could not wait (engine thread, closing device) so far. */
    long deregistrationsNotAwaited() {
        return deregistrationsNotAwaited.get();
    }

    /** Deregistrations whose wait ended before the engine settled the revocation so far. */
    long deregistrationWaitsExpired() {
        return deregistrationWaitsExpired.get();
    }

    /** Revocations the engine settled by timing out a silent peer so far. */
    long revocationsTimedOut() {
        return exports.revocationsTimedOut();
    }

    /** This NIC's tag in rkey messages. */
    long tag() {
        return tag;
    }

    boolean isClosed() {
        return closed;
    }

    /** Engine: whether the peer {@code r} leads to is gone: the route failed, or the peer is a NIC of this JVM that closed. */
    boolean peerGone(UcxRoute r) {
        UcxAttachment peer = r.target.local();
        return r.failed || peer != null && peer.isClosed();
    }

    /**
     * Engine: the peer at the end of {@code r} did not acknowledge the revocation of {@code rkey} within
     * {@code timeoutNs}: it is taken for failed. Its route fails (the NIC completes the queue pairs on it
     * with RETRY_EXC_ERR) and its endpoint is closed where UCX allows a forced close (peer-failure mode,
     * e.g. {@code tcp}), so the peer's endpoint errors too and no later put of it lands.
     */
    void revocationUnacknowledged(@Nullable UcxRoute r, int rkey, long timeoutNs) {
        if (r == null) {
            return;
        }
        routeFailed(r, "peer " + r.destination() + " did not acknowledge the revocation of rkey 0x" + Integer.toHexString(rkey)
            + " within " + timeoutNs / 1_000_000 + " ms (provider option revoke-timeout); taken for failed");
        UcpEndpoint ep = r.endpoint;
        if (ep != null) {
            r.endpoint = null;
            UcxEndpoints.close(worker, ep);
        }
    }

    SoftDevice nic() {
        return nic;
    }

    /** This NIC's UCP worker address (a copy; any thread). */
    byte[] workerAddressBytes() {
        return workerAddress.clone();
    }

    /** Frames handed to UCX so far. */
    long framesSent() {
        return framesSent;
    }

    /** Frames UCX delivered to this NIC so far. */
    long framesReceived() {
        return framesReceived;
    }

    /** Frames whose header failed validation (dropped). */
    long framesRejected() {
        return framesRejected;
    }

    /** Whether {@link #awaitWork} blocks on the worker's event fd (true) or returns false at once (false). */
    void eventWait(boolean enabled) {
        this.eventWaitEnabled = enabled;
    }

    /** Event-fd waits that blocked so far (monitoring; may lag). */
    long eventWaits() {
        return eventWait.waits();
    }

    /**
     * Blocks on the worker's event fd ({@link UcxEventWait}) until a UCX event (a frame arriving, an
     * endpoint connecting), {@link #wakeup()}, or {@code timeoutNs}; the NIC has already bounded
     * {@code timeoutNs} by its next timer and held frame. Returns false at once with {@code wait=park},
     * when closed, or for a wait under {@link UcxEventWait#MIN_WAIT_NS}.
     */
    @Override
    public boolean awaitWork(long timeoutNs) {
        if (!eventWaitEnabled || closed) {
            return false;
        }
        return eventWait.await(timeoutNs);
    }

    @Override
    public void wakeup() {
        if (eventWaitEnabled && !closed) {
            eventWait.wakeup();
        }
    }

    @Override
    public PortAddress bind(SoftPort port) {
        return new PortAddress(UcxFrameTransport.FABRIC, nic.name(), port.number());
    }

    @Override
    public Route resolve(PortAddress address) {
        return new UcxRoute(address, transport.lookup(address));
    }

    // ---------------------------------------------------------------- send

    @Override
    public void transmit(SoftFrame f) {
        UcxRoute r = (UcxRoute) f.route;
        UcpEndpoint ep = r == null || closed ? null : endpoint(r);
        if (ep == null) {
            f.release();
            return;
        }
        putPath.transmit(f, r, ep);
    }

    /** End of an engine pass: flushes the endpoints of routes with puts, whose held frames follow ({@link UcxPutPath}). */
    @Override
    public void flush() {
        if (!closed) {
            putPath.flush();
        }
    }

    /**
     * Sends {@code f} on {@code ep} as one active message: its header and payload on {@link UcxFrameTransport#AM_ID},
     * or, {@code placed}, only its header on {@link UcxFrameTransport#AM_ID_PLACED} (the payload went as puts).
     */
    void send(SoftFrame f, UcxRoute r, UcpEndpoint ep, boolean placed) {
        ByteBuffer header = headerPool.poll();
        if (header == null) {
            header = NetFrameCodec.direct(HEADER);
        }
        NetFrameCodec.encodeHeader(f, header, 0);
        int payload = placed ? 0 : NetFrameCodec.payloadBytes(f);
        long dataAddress = 0;
        ByteBuffer staging = null;
        if (payload > 0) {
            if (f.payloadCount == 1 && f.payloadBuffers[0].isDirect()) {
                dataAddress = UcxUtils.getAddress(f.payloadBuffers[0]) + f.payloadOffsets[0];
            } else {
                staging = ByteBuffer.allocateDirect(payload);
                int at = 0;
                for (int i = 0; i < f.payloadCount; i++) {
                    staging.put(at, f.payloadBuffers[i], f.payloadOffsets[i], f.payloadLengths[i]);
                    at += f.payloadLengths[i];
                }
                dataAddress = UcxUtils.getAddress(staging);
            }
        }
        SendDone done = new SendDone(f, header, staging, r);
        framesSent++;
        start(done, ep, placed ? UcxFrameTransport.AM_ID_PLACED : UcxFrameTransport.AM_ID, header, HEADER, dataAddress, payload,
            UcpConstants.UCP_AM_SEND_FLAG_EAGER);
    }

    /**
     * Sends one rkey message ({@link UcxRkeyMessages}) on {@code ep}; {@code reply}: with
     * {@code UCP_AM_SEND_FLAG_REPLY}, so the receiver can answer on the endpoint UCX hands its handler.
     */
    void sendRkeyMessage(UcpEndpoint ep, ByteBuffer header, @Nullable ByteBuffer data, boolean reply, @Nullable Runnable onError) {
        if (closed) {
            return;
        }
        SendDone done = new SendDone(null, header, data, null);
        done.onFailure = onError;
        long flags = UcpConstants.UCP_AM_SEND_FLAG_EAGER | (reply ? UcpConstants.UCP_AM_SEND_FLAG_REPLY : 0);
        start(done, ep, UcxFrameTransport.AM_ID_RKEY, header, UcxRkeyMessages.HEADER, data == null ? 0 : UcxUtils.getAddress(data),
            data == null ? 0 : data.remaining(), flags);
    }

    private void start(SendDone done, UcpEndpoint ep, int amId, ByteBuffer header, int headerBytes, long dataAddress, long dataBytes, long flags) {
        inFlight.add(done);
        try {
            UcpRequest req = ep.sendAmNonBlocking(amId, UcxUtils.getAddress(header), headerBytes, dataAddress, dataBytes, flags, done, hostMemory);
            if (!done.finished) {
                done.request = req;
            }
        } catch (RuntimeException e) {
            done.onError(-1, e.getMessage());
        }
    }

    /** The route's endpoint, created on first use; null (route broken) when UCX cannot reach the peer. */
    private @Nullable UcpEndpoint endpoint(UcxRoute r) {
        if (r.endpoint != null) {
            return r.endpoint;
        }
        if (r.failed) {
            return null;
        }
        try {
            r.endpoint = UcxEndpoints.open(worker, r.target.workerAddress(), peerFailureMode, (ep, status, message) ->
                routeFailed(r, "UCX endpoint to " + r.destination() + " failed (status " + status + "): " + message));
            routes.add(r);
            putPath.added(r);
            return r.endpoint;
        } catch (RuntimeException e) {
            routeFailed(r, "UCX cannot reach " + r.destination() + ": " + e.getMessage());
            return null;
        }
    }

    /** Marks {@code r} broken; the NIC hears of it after the current {@code progress()}. */
    void routeFailed(UcxRoute r, String reason) {
        if (r.failed) {
            return;
        }
        r.failed = true;
        broken.add(r);
        brokenReasons.add(reason);
    }

    /** One active message in flight: a frame (released when done), or an rkey message (frame and route null). */
    private final class SendDone extends UcxCallback {
        private final @Nullable SoftFrame frame;
        private final ByteBuffer header;
        /** Keeps staged or rkey-message data reachable until UCX is done with it. */
        @SuppressWarnings("unused")
        private final @Nullable ByteBuffer data;
        private final @Nullable UcxRoute route;
        @Nullable UcpRequest request;
        /** An rkey message's failure action (engine thread). */
        @Nullable Runnable onFailure;
        boolean finished;

        SendDone(@Nullable SoftFrame frame, ByteBuffer header, @Nullable ByteBuffer data, @Nullable UcxRoute route) {
            this.frame = frame;
            this.header = header;
            this.data = data;
            this.route = route;
        }

        @Override
        public void onSuccess(UcpRequest request) {
            finish();
        }

        @Override
        public void onError(int status, String message) {
            if (!closed && route != null) {
                routeFailed(route, "UCX send to " + route.destination() + " failed (status " + status + "): " + message);
            }
            if (!closed && onFailure != null) {
                onFailure.run();
            }
            finish();
        }

        private void finish() {
            if (finished) {
                return;
            }
            finished = true;
            inFlight.remove(this);
            if (frame != null) {
                frame.release();
                headerPool.offer(header);
            }
        }
    }

    // ---------------------------------------------------------------- receive

    private int onActiveMessage(long headerAddress, long headerSize, UcpAmData data, UcpEndpoint replyEp) {
        if (closed) {
            return UcsConstants.STATUS.UCS_OK;
        }
        ByteBuffer h = UcxUtils.getByteBufferView(headerAddress, headerSize).order(ByteOrder.LITTLE_ENDIAN);
        long dataLength = data.getLength();
        if (headerSize != HEADER || dataLength > Integer.MAX_VALUE - HEADER || !data.isDataValid()
            || NetFrameCodec.validate(h, 0, Integer.MAX_VALUE) != NetFrameCodec.Verdict.OK
            || NetFrameCodec.frameLength(h, 0) != HEADER + dataLength) {
            framesRejected++;
            return UcsConstants.STATUS.UCS_OK;
        }
        SoftFrame f = nic.claimFrame();
        long delay = NetFrameCodec.decodeHeader(h, 0, f);
        f.deliverAtNs = nowNs + delay;
        int len = (int) dataLength;
        if (len > 0) {
            ByteBuffer own = len <= SoftFrame.MAX_OWN_PAYLOAD ? f.ownPayload(len) : ByteBuffer.allocateDirect(len);
            own.put(0, UcxUtils.getByteBufferView(data.getDataAddress(), len), 0, len);
            f.addPayload(own, 0, len);
        }
        arrived.add(f);
        framesReceived++;
        return UcsConstants.STATUS.UCS_OK;
    }

    /** A WRITE's header whose payload the requester already put ({@link UcxPutPath}): no data, flagged placed. */
    private int onPlacedHeader(long headerAddress, long headerSize, UcpAmData data, UcpEndpoint replyEp) {
        if (closed) {
            return UcsConstants.STATUS.UCS_OK;
        }
        ByteBuffer h = UcxUtils.getByteBufferView(headerAddress, headerSize).order(ByteOrder.LITTLE_ENDIAN);
        if (headerSize != HEADER || data.getLength() != 0
            || NetFrameCodec.validate(h, 0, Integer.MAX_VALUE) != NetFrameCodec.Verdict.OK) {
            framesRejected++;
            return UcsConstants.STATUS.UCS_OK;
        }
        SoftFrame f = nic.claimFrame();
        long delay = NetFrameCodec.decodeHeader(h, 0, f);
        f.deliverAtNs = nowNs + delay;
        if (f.type == FrameType.RDMA_WRITE) {
            f.payloadPlaced = true;
        } else if (f.type == FrameType.RDMA_READ_REQUEST) {
            // the requester fetches the data itself: its response goes as a header only
            servedByGet.add(getKey(f.destinationQpn, f.psn));
        } else if (f.type == FrameType.RDMA_READ_RESPONSE) {
            PendingGet pg = pendingGets.remove(getKey(f.destinationQpn, f.psn));
            if (pg == null || pg.length() != f.length) {
                f.release();
                framesRejected++;
                return UcsConstants.STATUS.UCS_OK;
            }
            Fetch fetch = new Fetch(pg);
            fetching.put(f, fetch);
            toFetch.add(fetch);
        } else {
            f.release();
            framesRejected++;
            return UcsConstants.STATUS.UCS_OK;
        }
        arrived.add(f);
        framesReceived++;
        return UcsConstants.STATUS.UCS_OK;
    }

    /** An rkey message ({@link UcxRkeyMessages}): handed to the exports (as responder) or the put path (as requester). */
    private int onRkeyMessage(long headerAddress, long headerSize, UcpAmData data, UcpEndpoint replyEp) {
        if (closed || headerSize != UcxRkeyMessages.HEADER) {
            return UcsConstants.STATUS.UCS_OK;
        }
        ByteBuffer h = UcxUtils.getByteBufferView(headerAddress, headerSize).order(ByteOrder.LITTLE_ENDIAN);
        int kind = UcxRkeyMessages.kind(h);
        int routeId = UcxRkeyMessages.routeId(h);
        int rkey = UcxRkeyMessages.rkey(h);
        switch (kind) {
            case UcxRkeyMessages.REQUEST -> {
                if (replyEp != null) {
                    exports.requested(replyEp, UcxRkeyMessages.address(h), routeId, rkey, UcxRkeyMessages.qpnOrAccess(h));
                }
            }
            case UcxRkeyMessages.REVOKE_ACK -> exports.acknowledged(UcxRkeyMessages.address(h), routeId, rkey);
            case UcxRkeyMessages.REPLY -> {
                long len = data.getLength();
                if (len <= 0 || len > UcxRkeyMessages.MAX_PACKED || !data.isDataValid()) {
                    return UcsConstants.STATUS.UCS_OK;
                }
                ByteBuffer packed = ByteBuffer.allocateDirect((int) len);
                packed.put(0, UcxUtils.getByteBufferView(data.getDataAddress(), len), 0, (int) len);
                putPath.receivedMessage(kind, routeId, rkey, UcxRkeyMessages.qpnOrAccess(h), UcxRkeyMessages.address(h),
                    UcxRkeyMessages.length(h), packed);
            }
            case UcxRkeyMessages.REFUSED, UcxRkeyMessages.REVOKE -> putPath.receivedMessage(kind, routeId, rkey, 0, 0, 0, null);
            default -> {
            }
        }
        return UcsConstants.STATUS.UCS_OK;
    }

    @Override
    public int poll(long nowNs, int limit) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        Thread t = Thread.currentThread();
        if (engineThread != t) {
            engineThread = t;
        }
        try {
            while (arrived.size() < limit && worker.progress() > 0) {
                // progress until UCX has nothing more or enough frames arrived
            }
        } catch (Exception e) {
            throw new VerbsException("UCX worker progress failed on device '" + nic.name() + "': " + e.getMessage(), e);
        }
        exports.afterProgress(nowNs);
        putPath.afterProgress();
        if (!toFetch.isEmpty()) {
            startGets();
        }
        if (!getRequests.isEmpty()) {
            getRequests.removeIf(UcpRequest::isCompleted);
        }
        reportBrokenRoutes();
        int n = 0;
        SoftFrame f;
        while ((f = arrived.peek()) != null) {
            Fetch fetch = fetching.isEmpty() ? null : fetching.get(f);
            if (fetch != null) {
                if (fetch.state == Fetch.STARTED) {
                    break; // frames behind a READ response whose data is being fetched wait: arrival order holds
                }
                fetching.remove(f);
                if (fetch.state == Fetch.FAILED) {
                    arrived.poll();
                    f.release(); // the requester's transport timer retransmits the READ, as frames
                    continue;
                }
                f.addPayload(fetch.staging, 0, fetch.pending.length());
            }
            arrived.poll();
            if (nic.onFrameArrived(f, nowNs)) {
                f.release();
                if (fetch != null) {
                    recycle(fetch.staging); // the NIC copied the data out: the buffer is free again
                }
            }
            n++;
        }
        return n;
    }

    // ---------------------------------------------------------------- RDMA READ as ucp_get

    /** A READ request sent for a {@code ucp_get}: where its data lies at the responder. */
    record PendingGet(UcxRoute route, UcpEndpoint ep, org.openucx.jucx.ucp.UcpRemoteKey key, int rkey, long remoteAddress, int length) {
    }

    /** A header-only READ response whose data is being fetched. */
    private static final class Fetch {
        static final int STARTED = 1;
        static final int DONE = 2;
        static final int FAILED = 3;
        final PendingGet pending;
        @Nullable ByteBuffer staging;
        int state = STARTED;

        Fetch(PendingGet pending) {
            this.pending = pending;
        }
    }

    /** READ requests sent for gets, by (requester QPN, PSN); engine only. */
    private final java.util.HashMap<Long, PendingGet> pendingGets = new java.util.HashMap<>();
    /** READ requests received whose response goes header-only, by (responder QPN, PSN); engine only. */
    private final java.util.HashSet<Long> servedByGet = new java.util.HashSet<>();
    private final java.util.IdentityHashMap<SoftFrame, Fetch> fetching = new java.util.IdentityHashMap<>();
    private final ArrayDeque<Fetch> toFetch = new ArrayDeque<>();
    private final List<UcpRequest> getRequests = new ArrayList<>();

    /** Staging buffers of finished gets, reused (at most {@link #STAGING_POOL}; a held frame's is left to the GC). */
    private final ArrayDeque<ByteBuffer> stagingPool = new ArrayDeque<>();
    private static final int STAGING_POOL = 32;

    private ByteBuffer stagingFor(int length) {
        for (int i = stagingPool.size(); i > 0; i--) {
            ByteBuffer b = stagingPool.poll();
            if (b.capacity() >= length) {
                return b;
            }
            stagingPool.add(b);
        }
        return ByteBuffer.allocateDirect(length);
    }

    private void recycle(@Nullable ByteBuffer b) {
        if (b != null && stagingPool.size() < STAGING_POOL) {
            stagingPool.add(b);
        }
    }

    private static long getKey(int qpn, int psn) {
        return (long) qpn << 32 | (psn & 0xFFFF_FFFFL);
    }

    /** Engine: a READ request of QP {@code qpn} with {@code psn} goes as a get request. */
    void expectGet(int qpn, int psn, PendingGet pg) {
        pendingGets.put(getKey(qpn, psn), pg);
    }

    /** Engine: whether the READ response of QP {@code qpn} for {@code psn} goes header-only (once). */
    boolean servedByGet(int qpn, int psn) {
        return !servedByGet.isEmpty() && servedByGet.remove(getKey(qpn, psn));
    }

    /** Engine: the responder revoked {@code rkey}: gets on {@code r} not yet answered will not be started. */
    void dropPendingGets(UcxRoute r, int rkey) {
        if (!pendingGets.isEmpty()) {
            pendingGets.values().removeIf(pg -> pg.route() == r && pg.rkey() == rkey);
        }
    }

    /**
     * Engine, after progress returned: starts the gets of header-only READ responses that arrived. Started
     * before the pass's flush, so a REVOKE_ACK the route sends after that flush follows their completion.
     */
    private void startGets() {
        Fetch fetch;
        while ((fetch = toFetch.poll()) != null) {
            PendingGet pg = fetch.pending;
            if (pg.route().failed || pg.route().endpoint != pg.ep()) {
                fetch.state = Fetch.FAILED;
                continue;
            }
            ByteBuffer staging = stagingFor(pg.length());
            fetch.staging = staging;
            Fetch f = fetch;
            UcxCallback done = new UcxCallback() {
                @Override
                public void onSuccess(UcpRequest request) {
                    f.state = Fetch.DONE;
                }

                @Override
                public void onError(int status, String message) {
                    f.state = Fetch.FAILED;
                }
            };
            try {
                UcpRequest req = pg.ep().getNonBlocking(pg.remoteAddress(), pg.key(), UcxUtils.getAddress(staging), pg.length(), done, hostMemory);
                if (req != null && !req.isCompleted()) {
                    getRequests.add(req);
                }
            } catch (RuntimeException e) {
                fetch.state = Fetch.FAILED;
            }
        }
    }

    private void reportBrokenRoutes() {
        for (int i = 0; i < broken.size(); i++) {
            putPath.failed((UcxRoute) broken.get(i));
            nic.routeBroken(broken.get(i), brokenReasons.get(i));
        }
        broken.clear();
        brokenReasons.clear();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        eventWait.close();
        transport.detach(this);
        for (SendDone d : List.copyOf(inFlight)) {
            UcpRequest req = d.request;
            if (req != null && !req.isCompleted()) {
                worker.cancelRequest(req);
            }
        }
        putPath.close(worker::cancelRequest);
        for (UcpRequest req : getRequests) {
            if (!req.isCompleted()) {
                worker.cancelRequest(req);
            }
        }
        UcxEndpoints.progress(worker, () -> inFlight.isEmpty() && !putPath.flushesInFlight()
            && getRequests.stream().allMatch(UcpRequest::isCompleted));
        getRequests.clear();
        fetching.clear();
        toFetch.clear();
        pendingGets.clear();
        for (SendDone d : List.copyOf(inFlight)) {
            d.finish();
        }
        for (UcxRoute r : routes) {
            if (r.endpoint != null) {
                UcxEndpoints.close(worker, r.endpoint);
                r.endpoint = null;
            }
        }
        routes.clear();
        SoftFrame f;
        while ((f = arrived.poll()) != null) {
            f.release();
        }
        worker.removeAmRecvHandler(UcxFrameTransport.AM_ID);
        worker.removeAmRecvHandler(UcxFrameTransport.AM_ID_PLACED);
        worker.removeAmRecvHandler(UcxFrameTransport.AM_ID_RKEY);
        exports.close();
        worker.close();
        context.close();
    }

    /** A path to one remote NIC's port; its endpoint is created lazily on the sending engine thread. */
    static final class UcxRoute implements Route {
        private final PortAddress destination;
        final UcxDirectory.Entry target;
        @Nullable UcpEndpoint endpoint;
        boolean failed;
        // the put path's state (UcxPutPath), engine thread only
        int id = -1;
        final java.util.Map<Integer, UcxPutPath.Remote> rkeys = UcxPutPath.newCache();
        final ArrayDeque<UcxPutPath.Held> held = new ArrayDeque<>();
        /** Keys revoked by the responder, closed when the route closes. */
        final List<org.openucx.jucx.ucp.UcpRemoteKey> retiredKeys = new ArrayList<>();
        long flushesStarted;
        long flushesDone;
        boolean flushing;
        boolean putsSinceFlush;
        boolean anyRequest;
        int highestRequestPsn;

        UcxRoute(PortAddress destination, UcxDirectory.Entry target) {
            this.destination = destination;
            this.target = target;
        }

        @Override
        public PortAddress destination() {
            return destination;
        }
    }
}
