package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.soft.SoftDevice;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpWorker;

/**
 * The routes of one NIC that have a UCP endpoint, and their failures. An endpoint is opened on the
 * engine thread at a route's first transmission ({@link #open}); the route then joins this list, its
 * index being its id in rkey messages ({@link UcxPutPath}, which looks routes up here). A failed route
 * (an endpoint error: the peer's process died, reported over {@code tcp}, where endpoints are opened in
 * peer-failure mode, see {@link UcxEndpoints}; a failed send or flush; a peer that never acknowledged a
 * revocation) is marked at once and reported to the NIC after the current {@code progress()}
 * ({@link #reportBroken}), so the NIC, which fails the queue pairs on it with RETRY_EXC_ERR
 * ({@link SoftDevice#routeBroken}), never runs inside a UCX callback.
 *
 * <p>Owns the endpoints (closed by {@link #close}); not the worker.
 *
 * <p><b>Concurrency:</b> engine thread only ({@link #close} after the engine stopped).
 */
final class UcxRoutes {
    private final UcpWorker worker;
    private final SoftDevice nic;
    private final boolean peerFailureMode;
    /** Routes with an endpoint, by id. */
    private final List<UcxRoute> routes = new ArrayList<>();
    private final List<UcxRoute> broken = new ArrayList<>();
    private final List<String> brokenReasons = new ArrayList<>();

    UcxRoutes(UcpWorker worker, SoftDevice nic, boolean peerFailureMode) {
        this.worker = worker;
        this.nic = nic;
        this.peerFailureMode = peerFailureMode;
    }

    /**
     * The endpoint of {@code r}, which has none yet: opened and {@code r} given its id; null (the route
     * failed) when UCX cannot reach the peer, or when it already failed.
     */
    @Nullable UcpEndpoint open(UcxRoute r) {
        if (r.endpoint != null) {
            return r.endpoint;
        }
        if (r.failed) {
            return null;
        }
        try {
            r.endpoint = UcxEndpoints.open(worker, r.target.workerAddress(), peerFailureMode, (ep, status, message) ->
                failed(r, "UCX endpoint to " + r.destination() + " failed (status " + status + "): " + message));
            r.id = routes.size();
            routes.add(r);
            return r.endpoint;
        } catch (RuntimeException e) {
            failed(r, "UCX cannot reach " + r.destination() + ": " + e.getMessage());
            return null;
        }
    }

    /** Routes with an endpoint (ids {@code 0 .. size() - 1}). */
    int size() {
        return routes.size();
    }

    /** The route with id {@code id}, {@code 0 <= id < size()}. */
    UcxRoute byId(int id) {
        return routes.get(id);
    }

    /** Marks {@code r} broken; the NIC hears of it after the current {@code progress()}. */
    void failed(UcxRoute r, String reason) {
        if (r.failed) {
            return;
        }
        r.failed = true;
        broken.add(r);
        brokenReasons.add(reason);
    }

    /** After {@code progress()} returned: the put path drops the broken routes' held frames, then the NIC fails their queue pairs. */
    void reportBroken(UcxPutPath putPath) {
        for (int i = 0; i < broken.size(); i++) {
            putPath.failed(broken.get(i));
            nic.routeBroken(broken.get(i), brokenReasons.get(i));
        }
        broken.clear();
        brokenReasons.clear();
    }

    /** Whether the peer {@code r} leads to is gone: the route failed, or the peer is a NIC of this JVM that closed. */
    boolean peerGone(UcxRoute r) {
        UcxAttachment peer = r.target.local();
        return r.failed || peer != null && peer.isClosed();
    }

    /**
     * The peer at the end of {@code r} did not acknowledge the revocation of {@code rkey} within
     * {@code timeoutNs}: it is taken for failed. Its route fails (the NIC completes the queue pairs on it
     * with RETRY_EXC_ERR) and its endpoint is closed where UCX allows a forced close (peer-failure mode,
     * e.g. {@code tcp}), so the peer's endpoint errors too and no later put of it lands.
     */
    void revocationUnacknowledged(@Nullable UcxRoute r, int rkey, long timeoutNs) {
        if (r == null) {
            return;
        }
        failed(r, "peer " + r.destination() + " did not acknowledge the revocation of rkey 0x" + Integer.toHexString(rkey)
            + " within " + timeoutNs / 1_000_000 + " ms (provider option revoke-timeout); taken for failed");
        UcpEndpoint ep = r.endpoint;
        if (ep != null) {
            r.endpoint = null;
            UcxEndpoints.close(worker, ep);
        }
    }

    /** At close, once no request is in flight: closes every endpoint ({@link UcxEndpoints#close}) and forgets the routes. */
    void close() {
        for (UcxRoute r : routes) {
            if (r.endpoint != null) {
                UcxEndpoints.close(worker, r.endpoint);
                r.endpoint = null;
            }
        }
        routes.clear();
    }
}
