package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.FrameType;
import io.rdmaflux.verbs.soft.SoftDevice;
import io.rdmaflux.verbs.soft.SoftFrame;
import io.rdmaflux.verbs.soft.net.NetFrameCodec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * The receive side of one NIC: the worker's active-message handlers and the in-order delivery of what
 * they received. A handler runs inside {@code UcpWorker.progress()} on the engine thread; it validates
 * and decodes the header into a frame from the NIC's pool, copies the payload (UCX's receive buffer is
 * only valid during the callback: releasing persistent data through {@code amDataRelease} crashed
 * Debian's UCX 1.13.1 in our tests), and queues the frame. After {@code progress()} returned,
 * {@link #deliver} hands the frames to {@link SoftDevice#onFrameArrived} in arrival order, so the NIC
 * never runs inside a UCX callback; a header-only READ response whose data is still being fetched
 * ({@link UcxGetPath}) holds back the frames behind it. Rkey messages go to the region exports (as
 * responder) or the put path (as requester).
 *
 * <p>Owns the handlers (removed by {@link #close}) and the frames received and not yet delivered
 * (released by {@link #close}).
 *
 * <p><b>Concurrency:</b> engine thread only ({@link #stop} and {@link #close} after the engine stopped).
 */
final class UcxReceiver {
    private static final int HEADER = NetFrameCodec.HEADER_BYTES;

    private final UcpWorker worker;
    private final SoftDevice nic;
    private final UcxGetPath getPath;
    private final UcxPutPath putPath;
    private final UcxRegionExports exports;
    private final ArrayDeque<SoftFrame> arrived = new ArrayDeque<>();
    /** The current pass's time, ns: a frame is due at it plus the delay its header carries. */
    private long nowNs;
    private long framesRejected;
    private long framesReceived;
    /** Set when the NIC closes: what arrives while close progresses the worker is dropped. */
    private volatile boolean closed;

    /** Registers the handlers on {@code worker} (throws what UCX throws; the caller closes the worker). */
    UcxReceiver(UcpWorker worker, SoftDevice nic, UcxGetPath getPath, UcxPutPath putPath, UcxRegionExports exports) {
        this.worker = worker;
        this.nic = nic;
        this.getPath = getPath;
        this.putPath = putPath;
        this.exports = exports;
        worker.setAmRecvHandler(UcxFrameTransport.AM_ID, this::onActiveMessage, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
        worker.setAmRecvHandler(UcxFrameTransport.AM_ID_PLACED, this::onPlacedHeader, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
        worker.setAmRecvHandler(UcxFrameTransport.AM_ID_RKEY, this::onRkeyMessage, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
    }

    /** Frames UCX delivered to this NIC so far. */
    long framesReceived() {
        return framesReceived;
    }

    /** Frames whose header failed validation (dropped). */
    long framesRejected() {
        return framesRejected;
    }

    /** Progresses the worker at {@code nowNs} until UCX has nothing more or {@code limit} frames wait for delivery. */
    void receive(long nowNs, int limit) {
        this.nowNs = nowNs;
        try {
            while (arrived.size() < limit && worker.progress() > 0) {
                // progress until UCX has nothing more or enough frames arrived
            }
        } catch (Exception e) {
            throw new VerbsException("UCX worker progress failed on device '" + nic.name() + "': " + e.getMessage(), e);
        }
    }

    /** Hands the frames received to the NIC in arrival order, up to a READ response still fetching; returns how many. */
    int deliver() {
        int n = 0;
        SoftFrame f;
        while ((f = arrived.peek()) != null) {
            UcxGetPath.Fetch fetch = getPath.fetchOf(f);
            if (fetch != null) {
                if (fetch.inProgress()) {
                    break; // frames behind a READ response whose data is being fetched wait: arrival order holds
                }
                getPath.settled(f);
                if (fetch.failed()) {
                    arrived.poll();
                    f.release(); // the requester's transport timer retransmits the READ, as frames
                    continue;
                }
                fetch.attachTo(f);
            }
            arrived.poll();
            if (nic.onFrameArrived(f, nowNs)) {
                f.release();
                if (fetch != null) {
                    getPath.recycle(fetch); // the NIC copied the data out: the buffer is free again
                }
            }
            n++;
        }
        return n;
    }

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

    /**
     * A header whose payload moves by RMA: a WRITE whose payload the requester already put
     * ({@link UcxPutPath}), flagged placed; or a READ request or response of the get path ({@link UcxGetPath}).
     */
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
            getPath.requestArrived(f);
        } else if (f.type != FrameType.RDMA_READ_RESPONSE || !getPath.responseArrived(f)) {
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

    /** At close, before the worker's last progress: what arrives from now on is dropped. */
    void stop() {
        closed = true;
    }

    /** At close, after the worker's last progress: releases the frames not delivered and removes the handlers. */
    void close() {
        SoftFrame f;
        while ((f = arrived.poll()) != null) {
            f.release();
        }
        worker.removeAmRecvHandler(UcxFrameTransport.AM_ID);
        worker.removeAmRecvHandler(UcxFrameTransport.AM_ID_PLACED);
        worker.removeAmRecvHandler(UcxFrameTransport.AM_ID_RKEY);
    }
}
