package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.net.NetFrameCodec;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;

/**
 * The send side of one NIC: frames and rkey messages as UCX active messages. A frame's header is
 * encoded into a pooled 64-byte direct buffer, its payload sent from where it lies (one direct gather
 * entry) or gathered into a staging buffer, and the frame (and its buffers) released in the send's
 * completion callback. A failed frame send breaks its route ({@link UcxRoutes#failed}).
 *
 * <p>Owns the header pool and every send in flight: at close they are cancelled ({@link #stop}; UCX
 * aborts on a worker destroyed with requests pending) and finished ({@link #finishAll}).
 *
 * <p><b>Concurrency:</b> engine thread only ({@link #stop} and {@link #finishAll} after the engine stopped).
 */
final class UcxSender {
    private static final int HEADER = NetFrameCodec.HEADER_BYTES;

    private final UcpRequestParams hostMemory;
    private final UcxRoutes routes;
    private final ArrayDeque<ByteBuffer> headerPool = new ArrayDeque<>();
    /** Sends UCX has not completed yet (cancelled on close: UCX aborts on a worker destroyed with requests pending). */
    private final Set<SendDone> inFlight = Collections.newSetFromMap(new IdentityHashMap<>());
    private long framesSent;
    /** Set when the NIC closes: failures while close progresses the worker fail no route. */
    private volatile boolean closed;

    UcxSender(UcpRequestParams hostMemory, UcxRoutes routes) {
        this.hostMemory = hostMemory;
        this.routes = routes;
    }

    /** Frames handed to UCX so far. */
    long framesSent() {
        return framesSent;
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
     * {@code onError} runs (engine thread) if the send fails before the NIC closed.
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

    /** At close: sends no more, and cancels the sends UCX has not completed (their callbacks run as the worker progresses). */
    void stop(UcpWorker worker) {
        closed = true;
        for (SendDone d : List.copyOf(inFlight)) {
            UcpRequest req = d.request;
            if (req != null && !req.isCompleted()) {
                worker.cancelRequest(req);
            }
        }
    }

    /** Whether no send is in flight. */
    boolean idle() {
        return inFlight.isEmpty();
    }

    /** At close, after the worker's last progress: releases the frames of sends that never completed. */
    void finishAll() {
        for (SendDone d : List.copyOf(inFlight)) {
            d.finish();
        }
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
                routes.failed(route, "UCX send to " + route.destination() + " failed (status " + status + "): " + message);
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
}
