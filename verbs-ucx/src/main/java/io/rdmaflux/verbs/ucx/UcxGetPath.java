package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.soft.SoftFrame;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;

/**
 * RDMA READ as {@code ucp_get}, both sides. The requester's put path sends a READ of more than
 * {@link UcxPutPath#GET_MIN_EXCLUSIVE} bytes, whose route holds a usable rkey, as a header only and
 * records where its data lies ({@link #expectGet}). The responder NIC handles the request as any READ;
 * its response goes header-only ({@link #requestArrived}, {@link #servedByGet}). When that header
 * arrives at the requester ({@link #responseArrived}), the data is fetched with {@code ucp_get} into a
 * staging buffer ({@link #afterProgress}), and the response, with the staging buffer as its payload, goes
 * to the NIC once the get completed: frames that arrived behind it wait, so arrival order holds
 * ({@link UcxReceiver}). A get that fails, or whose route failed or changed its endpoint, drops its
 * response; the requester's transport timer retransmits the READ, as frames.
 *
 * <p>Owns the gets in flight (cancelled at close: {@link #stop}) and a pool of at most
 * {@value #STAGING_POOL} staging buffers (a buffer a NIC still holds is left to the GC).
 *
 * <p><b>Concurrency:</b> engine thread only ({@link #stop} and {@link #clear} after the engine stopped).
 */
final class UcxGetPath {
    private static final int STAGING_POOL = 32;

    private final UcpRequestParams hostMemory;
    /** READ requests sent for gets, by (requester QPN, PSN). */
    private final HashMap<Long, PendingGet> pendingGets = new HashMap<>();
    /** READ requests received whose response goes header-only, by (responder QPN, PSN). */
    private final HashSet<Long> servedByGet = new HashSet<>();
    /** Header-only READ responses that arrived, with their fetch. */
    private final IdentityHashMap<SoftFrame, Fetch> fetching = new IdentityHashMap<>();
    private final ArrayDeque<Fetch> toFetch = new ArrayDeque<>();
    private final List<UcpRequest> getRequests = new ArrayList<>();
    /** Staging buffers of finished gets, reused. */
    private final ArrayDeque<ByteBuffer> stagingPool = new ArrayDeque<>();

    UcxGetPath(UcpRequestParams hostMemory) {
        this.hostMemory = hostMemory;
    }

    /** A READ request sent for a {@code ucp_get}: where its data lies at the responder. */
    record PendingGet(UcxRoute route, UcpEndpoint ep, UcpRemoteKey key, int rkey, long remoteAddress, int length) {
    }

    /** A header-only READ response whose data is being fetched. */
    static final class Fetch {
        private static final int STARTED = 1;
        private static final int DONE = 2;
        private static final int FAILED = 3;
        private final PendingGet pending;
        private @Nullable ByteBuffer staging;
        private int state = STARTED;

        private Fetch(PendingGet pending) {
            this.pending = pending;
        }

        /** Whether the get has not completed yet. */
        boolean inProgress() {
            return state == STARTED;
        }

        boolean failed() {
            return state == FAILED;
        }

        /** Gives the completed get's data to its response {@code f} as its payload. */
        void attachTo(SoftFrame f) {
            f.addPayload(staging, 0, pending.length());
        }
    }

    private static long getKey(int qpn, int psn) {
        return (long) qpn << 32 | (psn & 0xFFFF_FFFFL);
    }

    /** Requester: a READ request of QP {@code qpn} with {@code psn} goes as a get request. */
    void expectGet(int qpn, int psn, PendingGet pg) {
        pendingGets.put(getKey(qpn, psn), pg);
    }

    /** Responder, inside a UCX callback: a READ request {@code f} arrived as a header only; its response goes header-only. */
    void requestArrived(SoftFrame f) {
        servedByGet.add(getKey(f.destinationQpn, f.psn));
    }

    /** Responder: whether the READ response of QP {@code qpn} for {@code psn} goes header-only (once). */
    boolean servedByGet(int qpn, int psn) {
        return !servedByGet.isEmpty() && servedByGet.remove(getKey(qpn, psn));
    }

    /**
     * Requester, inside a UCX callback: the header-only READ response {@code f} arrived; its data is
     * fetched after progress returns. False (the caller drops it) when no get of that length was expected.
     */
    boolean responseArrived(SoftFrame f) {
        PendingGet pg = pendingGets.remove(getKey(f.destinationQpn, f.psn));
        if (pg == null || pg.length() != f.length) {
            return false;
        }
        Fetch fetch = new Fetch(pg);
        fetching.put(f, fetch);
        toFetch.add(fetch);
        return true;
    }

    /** Requester: the responder revoked {@code rkey}: gets on {@code r} not yet answered will not be started. */
    void dropPendingGets(UcxRoute r, int rkey) {
        if (!pendingGets.isEmpty()) {
            pendingGets.values().removeIf(pg -> pg.route() == r && pg.rkey() == rkey);
        }
    }

    /** The fetch of the arrived frame {@code f}, or null when {@code f} is no header-only READ response. */
    @Nullable Fetch fetchOf(SoftFrame f) {
        return fetching.isEmpty() ? null : fetching.get(f);
    }

    /** {@code f}'s fetch ended (its get completed or failed): {@code f} goes on (or is dropped). */
    void settled(SoftFrame f) {
        fetching.remove(f);
    }

    /** The NIC copied {@code fetch}'s data out: its staging buffer is free again. */
    void recycle(Fetch fetch) {
        ByteBuffer b = fetch.staging;
        if (b != null && stagingPool.size() < STAGING_POOL) {
            stagingPool.add(b);
        }
    }

    /**
     * After progress returned: starts the gets of header-only READ responses that arrived, and forgets
     * completed requests. Started before the pass's flush, so a REVOKE_ACK the route sends after that
     * flush follows their completion.
     */
    void afterProgress() {
        if (!toFetch.isEmpty()) {
            startGets();
        }
        if (!getRequests.isEmpty()) {
            getRequests.removeIf(UcpRequest::isCompleted);
        }
    }

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

    /** At close: cancels the gets UCX has not completed. */
    void stop(UcpWorker worker) {
        for (UcpRequest req : getRequests) {
            if (!req.isCompleted()) {
                worker.cancelRequest(req);
            }
        }
    }

    /** Whether every get started has completed. */
    boolean idle() {
        return getRequests.stream().allMatch(UcpRequest::isCompleted);
    }

    /** At close, after the worker's last progress: forgets every get. */
    void clear() {
        getRequests.clear();
        fetching.clear();
        toFetch.clear();
        pendingGets.clear();
    }
}
