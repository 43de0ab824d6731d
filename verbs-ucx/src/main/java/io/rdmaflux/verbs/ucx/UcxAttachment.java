package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.FrameTransport;
import io.rdmaflux.verbs.soft.Route;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.SoftPort;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * One soft NIC's view of the {@link UcxFrameTransport}: its UCP context and worker, and the parts
 * that share them, each its own class:
 * <ul>
 *   <li>{@link UcxRoutes}: the endpoints, one per route, created on the engine thread at first
 *       transmit, and route failures (the NIC fails the queue pairs on a broken route with
 *       RETRY_EXC_ERR, {@link SoftDevice#routeBroken}; over shared memory, which has no peer-failure
 *       mode, the NIC's transport retry timer finds a dead peer);</li>
 *   <li>{@link UcxSender} and {@link UcxReceiver}: frames as active messages, sent and received, and
 *       their delivery to the NIC after {@code progress()} returned, in arrival order, so the NIC never
 *       runs inside a UCX callback;</li>
 *   <li>{@link UcxPutPath} and {@link UcxGetPath}: RDMA WRITE as {@code ucp_put}, RDMA READ as
 *       {@code ucp_get}; {@link UcxRegionExports}: this NIC's regions mapped for peers' puts and gets,
 *       and their revocation, which a deregistering thread waits for ({@link UcxDeregistrationWait});</li>
 *   <li>{@link UcxEventWait}: the idle wait on the worker's event fd ({@link #awaitWork}) when the
 *       provider's {@code wait} option is {@code event}.</li>
 * </ul>
 * An engine pass ({@link #poll}) progresses the worker, lets each part act on what arrived, then
 * delivers the frames; {@link #close} cancels and drains every request before it destroys the worker
 * (UCX aborts on a worker destroyed with requests pending).
 *
 * <p><b>Concurrency:</b> engine thread only, except {@link #bind}, {@link #resolve} (setup, any
 * thread; they touch no UCX object), {@link #wakeup()} (any thread: {@code ucp_worker_signal} is
 * thread-safe), {@link #regionDeregistered} (any thread), the setup methods ({@link #eventWait(boolean)},
 * {@link #putPath(boolean)}, {@link #revokeTimeoutNs(long)}), the counters (monitoring: values may lag)
 * and {@link #close} (after the engine stopped).
 */
final class UcxAttachment implements FrameTransport.Attachment {
    private final UcxFrameTransport transport;
    private final SoftDevice nic;
    private final UcpContext context;
    private final UcpWorker worker;
    private final byte[] workerAddress;
    private final UcxRoutes routes;
    private final UcxSender sender;
    private final UcxGetPath getPath;
    private final UcxPutPath putPath;
    private final UcxRegionExports exports;
    private final UcxReceiver receiver;
    private final UcxDeregistrationWait deregistrations;
    private final UcxEventWait eventWait;
    /** Whether {@link #awaitWork} blocks on the worker's event fd (provider option {@code wait=event}). */
    private volatile boolean eventWaitEnabled;
    private volatile boolean closed;

    UcxAttachment(UcxFrameTransport transport, SoftDevice nic) {
        this.transport = transport;
        this.nic = nic;
        this.context = transport.newContext();
        try {
            // RX and TX wakeup: a blocked engine must also wake when UCX can push out a send it queued
            this.worker = context.newWorker(new UcpWorkerParams().requestWakeupRX().requestWakeupTX());
        } catch (RuntimeException e) {
            context.close();
            throw new VerbsException("UCX could not open a worker for device '" + nic.name() + "': " + e.getMessage(), e);
        }
        UcpRequestParams hostMemory = new UcpRequestParams().setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
        this.routes = new UcxRoutes(worker, nic, UcxEndpoints.peerFailureMode(transport.tls()));
        this.sender = new UcxSender(hostMemory, routes);
        this.getPath = new UcxGetPath(hostMemory);
        // this NIC's tag in rkey messages (UcxRkeyMessages): tells its routes from another requester's
        this.putPath = new UcxPutPath(routes, sender, getPath, new SecureRandom().nextLong(), hostMemory);
        this.exports = new UcxRegionExports(sender, routes, nic, context);
        this.deregistrations = new UcxDeregistrationWait(exports, nic, this::wakeup);
        try {
            ByteBuffer address = worker.getAddress();
            this.workerAddress = new byte[address.remaining()];
            address.get(address.position(), this.workerAddress);
            this.receiver = new UcxReceiver(worker, nic, getPath, putPath, exports);
            this.eventWait = new UcxEventWait(worker, nic.name());
        } catch (RuntimeException e) {
            worker.close();
            context.close();
            throw new VerbsException("UCX could not set up a worker for device '" + nic.name() + "': " + e.getMessage(), e);
        }
    }

    /** RDMA WRITEs sent as {@code ucp_put} so far ({@link UcxPutPath}). */
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
     * region's key went to peers, waits until every one of them acknowledged the revocation or is gone,
     * bounded by the revoke timeout ({@link UcxDeregistrationWait}), so that no put with the old key
     * lands after this returns, as after {@code ibv_dereg_mr}. Does nothing once closed.
     */
    @Override
    public void regionDeregistered(MemoryRegion region) {
        if (!closed) {
            deregistrations.deregistered(region);
        }
    }

    /**
     * Any thread, never blocks: queues the revocation as {@link #regionDeregistered} does and returns a stage
     * the engine completes once the region is out of every peer's reach ({@link UcxDeregistrationWait#deregisteredAsync}).
     * Completed at once once closed (everything is unmapped then).
     */
    @Override
    public CompletionStage<Void> regionDeregisteredAsync(MemoryRegion region) {
        return closed ? CompletableFuture.completedFuture(null) : deregistrations.deregisteredAsync(region);
    }

    /** Setup: the revoke timeout, ns ({@link UcxRegionExports}). */
    void revokeTimeoutNs(long ns) {
        exports.revokeTimeoutNs(ns);
    }

    /** Deregistrations that waited for their revocation so far. */
    long deregistrationsAwaited() {
        return deregistrations.awaited();
    }

    /** Deregistrations of exported regions that could not wait (engine thread, closing device) so far. */
    long deregistrationsNotAwaited() {
        return deregistrations.notAwaited();
    }

    /** Asynchronous deregistrations of regions whose key went to peers so far. */
    long deregistrationsAsync() {
        return deregistrations.async();
    }

    /** Deregistrations whose wait ended before the engine settled the revocation so far. */
    long deregistrationWaitsExpired() {
        return deregistrations.waitsExpired();
    }

    /** Revocations the engine settled by timing out a silent peer so far. */
    long revocationsTimedOut() {
        return exports.revocationsTimedOut();
    }

    /** Whether this NIC closed (any thread: a peer's routes take it for gone, {@link UcxRoutes#peerGone}). */
    boolean isClosed() {
        return closed;
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
        return sender.framesSent();
    }

    /** Frames UCX delivered to this NIC so far. */
    long framesReceived() {
        return receiver.framesReceived();
    }

    /** Frames whose header failed validation (dropped). */
    long framesRejected() {
        return receiver.framesRejected();
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

    /** Sends {@code f} on its route's endpoint (opened at the route's first frame) through the put path; dropped when the route is broken. */
    @Override
    public void transmit(SoftFrame f) {
        UcxRoute r = (UcxRoute) f.route;
        if (r == null || closed) {
            f.release();
            return;
        }
        UcpEndpoint ep = r.endpoint;
        if (ep == null && (ep = routes.open(r)) == null) {
            f.release(); // the route is broken: the NIC hears of it after this pass
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

    @Override
    public int poll(long nowNs, int limit) {
        if (closed) {
            return 0;
        }
        deregistrations.engineIs(Thread.currentThread());
        receiver.receive(nowNs, limit);
        exports.afterProgress(nowNs);
        putPath.afterProgress();
        getPath.afterProgress();
        routes.reportBroken(putPath);
        return receiver.deliver();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        receiver.stop();
        eventWait.close();
        transport.detach(this);
        sender.stop(worker);
        putPath.close(worker::cancelRequest);
        getPath.stop(worker);
        UcxEndpoints.progress(worker, () -> sender.idle() && !putPath.flushesInFlight() && getPath.idle());
        getPath.clear();
        sender.finishAll();
        routes.close();
        receiver.close();
        exports.close();
        worker.close();
        context.close();
    }
}
