package io.rdmaflux.verbs.ucx;

import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointErrorHandler;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.jspecify.annotations.Nullable;

/**
 * Opening and closing UCP endpoints the way each UCX transport allows. Peer-failure mode (UCX
 * reports a dead peer through the error handler) exists over {@code tcp} and RDMA transports but not
 * over shared memory, where UCX refuses such an endpoint as unreachable (and logs an error); so it is
 * asked for only when the transport list names no shared-memory transport ({@link
 * #peerFailureMode}). Closing is forced in peer-failure mode (pending sends fail at once); otherwise
 * (UCX rejects a forced close there) the endpoint is left to the worker's destruction.
 */
final class UcxEndpoints {
    /** Progress passes a close may take before it is given up (the worker is closed right after). */
    private static final int CLOSE_PASSES = 100_000;

    private static final Set<UcpEndpoint> PEER_FAILURE_MODE = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private UcxEndpoints() {
    }

    /**
     * Whether endpoints over {@code tls} can be opened in peer-failure mode: only when a list is given
     * and none of its transports is a shared-memory one (UCX's default list includes them).
     */
    static boolean peerFailureMode(@Nullable String tls) {
        if (tls == null) {
            return false;
        }
        for (String t : tls.split(",")) {
            String name = t.trim().toLowerCase(java.util.Locale.ROOT);
            if (name.equals("sm") || name.equals("shm") || name.equals("self") || name.equals("posix") || name.equals("sysv")
                || name.equals("cma") || name.equals("knem") || name.equals("xpmem") || name.equals("all")) {
                return false;
            }
        }
        return true;
    }

    /** An endpoint to the worker at {@code workerAddress}, in peer-failure mode when {@code peerFailureMode}. */
    static UcpEndpoint open(UcpWorker worker, ByteBuffer workerAddress, boolean peerFailureMode, UcpEndpointErrorHandler onError) {
        if (!peerFailureMode) {
            return worker.newEndpoint(new UcpEndpointParams().setUcpAddress(workerAddress));
        }
        UcpEndpoint ep = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(workerAddress)
            .setPeerErrorHandlingMode().setErrorHandler(onError));
        PEER_FAILURE_MODE.add(ep);
        return ep;
    }

    /** Closes {@code ep}, progressing {@code worker} until UCX has finished (bounded). */
    static void close(UcpWorker worker, UcpEndpoint ep) {
        boolean peerMode = PEER_FAILURE_MODE.remove(ep);
        if (!peerMode) {
            // left to ucp_worker_destroy: a flush-close that cannot finish (its peer's worker is not being
            // progressed) made Debian's UCX 1.13.1 abort in ucp_worker_destroy (request not released)
            return;
        }
        UcpRequest req;
        try {
            req = ep.closeNonBlockingForce();
        } catch (RuntimeException e) {
            return;
        }
        if (req != null && !progress(worker, req::isCompleted)) {
            worker.cancelRequest(req);
            progress(worker, req::isCompleted);
        }
    }

    /** Progresses {@code worker} until {@code done} (at most {@value #CLOSE_PASSES} passes); returns whether it is. */
    static boolean progress(UcpWorker worker, java.util.function.BooleanSupplier done) {
        for (int i = 0; i < CLOSE_PASSES && !done.getAsBoolean(); i++) {
            try {
                worker.progress();
            } catch (Exception e) {
                return done.getAsBoolean();
            }
        }
        return done.getAsBoolean();
    }
}
