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

/**
 * Opening and closing UCP endpoints the way each UCX transport allows. Peer-failure mode (UCX
 * reports a dead peer through the error handler) exists over {@code tcp} and RDMA transports but not
 * over shared memory, where UCX refuses such an endpoint as unreachable; so an endpoint is first
 * asked for in that mode and, when refused, opened without it. Closing is forced in peer-failure mode
 * (pending sends fail at once) and flushed otherwise (UCX rejects a forced close there).
 */
final class UcxEndpoints {
    /** Progress passes a close may take before it is given up (the worker is closed right after). */
    private static final int CLOSE_PASSES = 100_000;

    private static final Set<UcpEndpoint> PEER_FAILURE_MODE = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    private UcxEndpoints() {
    }

    /** An endpoint to the worker at {@code workerAddress}, in peer-failure mode where the transport has it. */
    static UcpEndpoint open(UcpWorker worker, ByteBuffer workerAddress, UcpEndpointErrorHandler onError) {
        try {
            UcpEndpoint ep = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(workerAddress)
                .setPeerErrorHandlingMode().setErrorHandler(onError));
            PEER_FAILURE_MODE.add(ep);
            return ep;
        } catch (RuntimeException peerModeRefused) {
            return worker.newEndpoint(new UcpEndpointParams().setUcpAddress(workerAddress));
        }
    }

    /** Closes {@code ep}, progressing {@code worker} until UCX has finished (bounded). */
    static void close(UcpWorker worker, UcpEndpoint ep) {
        boolean peerMode = PEER_FAILURE_MODE.remove(ep);
        UcpRequest req;
        try {
            req = peerMode ? ep.closeNonBlockingForce() : ep.closeNonBlockingFlush();
        } catch (RuntimeException e) {
            return;
        }
        for (int i = 0; i < CLOSE_PASSES && req != null && !req.isCompleted(); i++) {
            try {
                worker.progress();
            } catch (Exception e) {
                return;
            }
        }
    }
}
