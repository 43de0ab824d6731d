package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import java.nio.ByteBuffer;
import org.jspecify.annotations.Nullable;

/**
 * One unit a {@link FrameTransport} carries between soft NICs: an RC request or response, or a UD
 * datagram. Pooled and reused (no allocation per work request): obtained from a NIC with
 * {@link SoftDevice#claimFrame()}, returned with {@link #release()} by whoever consumes it.
 *
 * <p>Header fields are public for the transports' codecs; the NIC fills them before
 * {@code transmit} and reads them in {@code onFrameArrived}. Fields not used by a {@link FrameType}
 * are undefined.
 *
 * <p>Payload: a gather list of up to {@link SendWorkRequest#MAX_SGE} entries
 * {@code (payloadBuffers[i], payloadOffsets[i], payloadLengths[i])} over direct buffers, totalling
 * {@link #length} bytes (for READ requests, {@code length} is the requested size and the list is
 * empty). {@link #ownPayload(int)} gives a frame-owned buffer for copied payloads (UD, or a wire
 * transport's receive path).
 *
 * <p><b>Concurrency:</b> owned by one thread at a time; ownership passes with transmit/poll.
 */
public final class SoftFrame {
    /** Largest frame-owned payload, bytes (the largest UD MTU). */
    public static final int MAX_OWN_PAYLOAD = 4096;

    final FramePool pool;
    @Nullable SoftFrame next;

    public FrameType type = FrameType.ACK;
    /** Where the transport sends the frame. */
    public @Nullable Route route;
    /** Route back to the sender (responses use it). */
    public @Nullable Route sourceRoute;
    public int sourceQpn;
    /**
     * The sending NIC's host as the receiving transport saw it ({@code mem}: the device name;
     * {@code net}: the IP the TCP stream or datagram came from, as {@code InetAddress.getHostAddress()}),
     * or null where the transport cannot tell. An RC frame whose host is not its QP's connected peer's
     * is dropped ({@link SoftPeerCheck}).
     */
    public @Nullable String sourceHost;
    public int destinationQpn;
    /** 24-bit packet sequence number (one per RC work request). */
    public int psn;
    public boolean hasImmediate;
    /**
     * RDMA WRITE only, set by a receiving transport: the transport already placed the WRITE's
     * {@link #length} bytes at {@link #remoteAddress} itself (a one-sided put that completed before this
     * header arrived), so the frame carries no payload ({@code payloadCount} 0). The responder checks
     * rkey, bounds, access and PSN and acknowledges (or refuses) it as any WRITE, and completes a
     * WRITE_WITH_IMM's receive, but copies nothing. False on every frame a NIC builds.
     */
    public boolean payloadPlaced;
    public int immediate;
    /** Target virtual address at the responder (RDMA WRITE, READ request). */
    public long remoteAddress;
    public int rkey;
    /** UD Q_Key. */
    public int qkey;
    /** Payload bytes (READ request: bytes asked for). */
    public int length;
    /** NAK reason. */
    public WcStatus status = WcStatus.SUCCESS;
    /** Sender's clock at transmit, ns. */
    public long sentAtNs;
    /** Sender's clock at which the frame reaches the receiver (shaping + latency), ns. */
    public long deliverAtNs;
    /**
     * Whether the frame carries an {@link #icrc}, which the receiving NIC then checks, dropping the frame
     * on a mismatch ({@link SoftDevice#icrcDrops()}). Only frames the RC fault model corrupted carry one
     * (see {@link RcFaults}); every other frame is taken as intact. Reset by {@link SoftDevice#claimFrame()}.
     */
    public boolean hasIcrc;
    /** The invariant CRC the sending NIC computed ({@link Icrc}), meaningful when {@link #hasIcrc}. */
    public int icrc;
    /** Arrival sequence, used by the receiving NIC to keep order among frames due at the same time. */
    long arrivalSeq;

    public final ByteBuffer[] payloadBuffers = new ByteBuffer[SendWorkRequest.MAX_SGE];
    public final int[] payloadOffsets = new int[SendWorkRequest.MAX_SGE];
    public final int[] payloadLengths = new int[SendWorkRequest.MAX_SGE];
    /** Native address of each payload entry's first byte, 0 for an array-backed buffer. */
    final long[] payloadAddresses = new long[SendWorkRequest.MAX_SGE];
    public int payloadCount;

    private @Nullable ByteBuffer ownPayload;

    SoftFrame(FramePool pool) {
        this.pool = pool;
    }

    /**
     * Appends a payload entry: {@code length} bytes at {@code offset} of {@code buffer}, which must be
     * direct or array-backed.
     *
     * @throws IllegalArgumentException for a read-only heap buffer (no accessible array)
     */
    public void addPayload(ByteBuffer buffer, int offset, int length) {
        long address;
        if (buffer.isDirect()) {
            address = NativeMemory.address(buffer) + offset;
        } else if (buffer.hasArray()) {
            address = 0;
        } else {
            throw new IllegalArgumentException("frame payload buffers must be direct or array-backed, not read-only heap buffers");
        }
        addPayload(buffer, offset, length, address);
    }

    /** Appends a payload entry whose native address the caller knows (registered memory). */
    void addPayload(ByteBuffer buffer, int offset, int length, long address) {
        if (payloadBuffers[payloadCount] != buffer) {
            payloadBuffers[payloadCount] = buffer;
        }
        payloadOffsets[payloadCount] = offset;
        payloadLengths[payloadCount] = length;
        payloadAddresses[payloadCount] = address;
        payloadCount++;
    }

    /**
     * This frame's own direct buffer of at least {@code capacity} bytes (at most
     * {@link #MAX_OWN_PAYLOAD}), reused across uses of the frame.
     */
    public ByteBuffer ownPayload(int capacity) {
        ByteBuffer b = ownPayload;
        if (b == null || b.capacity() < capacity) {
            b = ByteBuffer.allocateDirect(Math.max(capacity, MAX_OWN_PAYLOAD));
            ownPayload = b;
        }
        return b;
    }

    /** Copies the header and payload of {@code other} into this frame, the payload into its own buffer. */
    void copyFrom(SoftFrame other) {
        copyHeader(other);
        ByteBuffer own = ownPayload(other.length);
        int pos = 0;
        for (int i = 0; i < other.payloadCount; i++) {
            own.put(pos, other.payloadBuffers[i], other.payloadOffsets[i], other.payloadLengths[i]);
            pos += other.payloadLengths[i];
        }
        addPayload(own, 0, other.length);
    }

    /**
     * Makes this frame a duplicate of {@code other} on the wire: the same header and the same payload
     * entries, by reference (an RC request's payload stays in registered memory of the sender, a READ
     * response's in the responder's, as for {@code other}; a duplicate that arrives after the original
     * was acknowledged is never placed).
     */
    void shareFrom(SoftFrame other) {
        copyHeader(other);
        for (int i = 0; i < other.payloadCount; i++) {
            addPayload(other.payloadBuffers[i], other.payloadOffsets[i], other.payloadLengths[i], other.payloadAddresses[i]);
        }
    }

    /** Copies every header field of {@code other} and empties this frame's payload list. */
    private void copyHeader(SoftFrame other) {
        type = other.type;
        route = other.route;
        sourceRoute = other.sourceRoute;
        sourceQpn = other.sourceQpn;
        sourceHost = other.sourceHost;
        destinationQpn = other.destinationQpn;
        psn = other.psn;
        hasImmediate = other.hasImmediate;
        payloadPlaced = other.payloadPlaced;
        immediate = other.immediate;
        remoteAddress = other.remoteAddress;
        rkey = other.rkey;
        qkey = other.qkey;
        length = other.length;
        status = other.status;
        sentAtNs = other.sentAtNs;
        deliverAtNs = other.deliverAtNs;
        hasIcrc = other.hasIcrc;
        icrc = other.icrc;
        payloadCount = 0;
    }

    /** Returns the frame to its pool; any thread; the frame must not be used afterwards. */
    public void release() {
        clearReferences();
        pool.giveBack(this);
    }

    /**
     * Readies the frame for its pool. Payload buffer and route references are deliberately kept:
     * re-storing the same reference on the next use is then free (no GC write barrier), and what a
     * pooled frame keeps reachable is bounded by the pool size.
     */
    void clearReferences() {
        payloadCount = 0;
    }

    @Override
    public String toString() {
        return "frame{" + type + ", qp " + sourceQpn + "->" + destinationQpn + ", psn=" + psn + ", len=" + length
            + (type == FrameType.NAK ? ", " + status : "") + "}";
    }
}
