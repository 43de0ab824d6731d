package io.rdmaflux.verbs.disni;

import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The thin internal seam between the {@code disni} provider and the native layer: exactly the
 * {@code rdma_cm} and verbs calls the provider makes, no more. {@link DisniSeam} implements it with
 * DiSNI 2.0 (one call each, JNI underneath); the tests implement it on the soft provider, so that
 * everything above this seam (QP state machine, CM flow, work-request translation, stateful verb call
 * reuse, completion mapping) runs in the provider TCK on a machine without RDMA hardware.
 *
 * <p>Data-path calls use DiSNI's own types ({@link IbvSendWR}, {@link IbvRecvWR}, {@link IbvWC} and the
 * stateful verb calls {@link SVCPostSend}, {@link SVCPostRecv}, {@link SVCPollCq}, which are plain Java
 * classes): a stateful verb call is built once from a list of work requests (the native layer
 * serializes them) and re-executed; between executions only what its {@code getWrMod} exposes may
 * change (DiSNI 2.0: a send's wr_id, send_flags, remote address, rkey and SGE address/length/lkey; a
 * receive nothing). Numeric codes are those of {@code verbs.h} and {@code rdma_cma.h} ({@link NativeCodes}).
 *
 * <p><b>Errors:</b> every call may throw {@link IOException} (a failed native call; the message names
 * it and, where known, the errno). <b>Concurrency:</b> as the native layer: a CM event channel is read by
 * one thread; posting on one QP from several threads needs the caller's lock.
 */
interface RdmaSeam {
    /** {@code rdma_create_event_channel}. */
    EventChannel createEventChannel() throws IOException;

    /** An {@code rdma_event_channel}: the CM events of every id created from it. */
    interface EventChannel {
        /** {@code rdma_create_id(channel, RDMA_PS_TCP)}. */
        CmId createId() throws IOException;

        /**
         * {@code rdma_get_cm_event} (with a poll timeout) then {@code rdma_ack_cm_event}; the event's
         * fields are copied before the ack.
         *
         * @param timeoutMs how long to wait, ms; 0 returns at once
         * @return the next event, or null if none arrived in time
         */
        @Nullable CmEvent poll(int timeoutMs) throws IOException;

        /** {@code rdma_destroy_event_channel}; every id must be destroyed first. */
        void destroy() throws IOException;
    }

    /**
     * An {@code rdma_cm_id}. Created unbound; {@link #bindAddr} or {@link #resolveAddr} binds it to a
     * device; a CONNECT_REQUEST event carries a new one already bound.
     */
    interface CmId {
        /** {@code rdma_bind_addr}: binds to a local IP and port (0: any free port). */
        void bindAddr(InetSocketAddress address) throws IOException;

        /** {@code rdma_listen}. */
        void listen(int backlog) throws IOException;

        /** {@code rdma_get_local_addr}: the bound address, with the real port. */
        InetSocketAddress source() throws IOException;

        /** {@code rdma_resolve_addr}; completes with ADDR_RESOLVED or ADDR_ERROR. */
        void resolveAddr(InetSocketAddress source, InetSocketAddress destination, int timeoutMs) throws IOException;

        /** {@code rdma_resolve_route}; completes with ROUTE_RESOLVED or ROUTE_ERROR. */
        void resolveRoute(int timeoutMs) throws IOException;

        /** The device ({@code id->verbs}) this id is bound to. */
        Context context() throws IOException;

        /**
         * {@code rdma_create_qp}: an RC QP on this id completing into {@code cq} (send and receive),
         * left in INIT (receives may be posted).
         *
         * @param timers retry counts and timers: the counts also go into {@link ConnParams}; the
         *               timers cannot be set through DiSNI (no {@code ibv_modify_qp}), so the native
         *               implementation ignores them and the NIC uses the CM's values
         */
        Qp createQp(Pd pd, Cq cq, IbvQPInitAttr attributes, QpTimers timers) throws IOException;

        /** {@code rdma_connect}; completes with ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR. */
        void connect(ConnParams params) throws IOException;

        /** {@code rdma_accept} on an id from a CONNECT_REQUEST; the QP goes to RTS; ESTABLISHED follows. */
        void accept(ConnParams params) throws IOException;

        /** {@code rdma_disconnect}: the QP goes to ERROR (flushing), the peer gets DISCONNECTED. */
        void disconnect() throws IOException;

        /** {@code rdma_destroy_qp}. */
        void destroyQp() throws IOException;

        /**
         * {@code rdma_destroy_id}. On an id from a CONNECT_REQUEST that was not accepted this rejects
         * the request (DiSNI has no {@code rdma_reject}; the kernel answers REJ when the id goes).
         */
        void destroy() throws IOException;
    }

    /**
     * One CM event, copied out of the native {@code rdma_cm_event}.
     *
     * @param type        {@code rdma_cm_event_type} ({@link NativeCodes#CM_ADDR_RESOLVED} ...)
     * @param status      the event status (a negative errno, or the reject reason for REJECTED)
     * @param id          the id the event is about (for CONNECT_REQUEST, the new id)
     * @param listenId    for CONNECT_REQUEST, the listening id; else null
     * @param privateData the peer's private data (CONNECT_REQUEST, ESTABLISHED, REJECTED), or empty
     */
    record CmEvent(int type, int status, CmId id, @Nullable CmId listenId, byte[] privateData) {
    }

    /**
     * What {@code rdma_connect}/{@code rdma_accept} carry ({@code rdma_conn_param} subset).
     *
     * @param privateData   at most {@link NativeCodes#MAX_PRIVATE_DATA} bytes
     * @param retryCount    transport retries, 0..7
     * @param rnrRetryCount RNR retries, 0..7 (7 = infinite)
     */
    record ConnParams(byte[] privateData, int retryCount, int rnrRetryCount) {
    }

    /** Retry counts and timers of a QP (see {@link CmId#createQp}); times in ns. */
    record QpTimers(int retryCount, long retryTimeoutNs, int rnrRetryCount, long rnrTimeoutNs) {
    }

    /** An {@code ibv_context}: one device. */
    interface Context {
        /** {@code ibv_alloc_pd}. */
        Pd allocPd() throws IOException;

        /** {@code ibv_create_comp_channel} + {@code ibv_create_cq} with {@code entries} entries. */
        Cq createCq(int entries) throws IOException;
    }

    /** An {@code ibv_pd}. */
    interface Pd {
        /** {@code ibv_reg_mr} over {@code [position, limit)} of a direct buffer, {@code IBV_ACCESS_*} flags. */
        Mr regMr(ByteBuffer buffer, int access) throws IOException;

        /** {@code ibv_dealloc_pd}. */
        void dealloc() throws IOException;
    }

    /** An {@code ibv_mr}. */
    interface Mr {
        long address();

        int length();

        int lkey();

        int rkey();

        /** {@code ibv_dereg_mr}. */
        void dereg() throws IOException;
    }

    /** An {@code ibv_cq}. */
    interface Cq {
        /** Builds the stateful {@code ibv_poll_cq} call that fills {@code wcs} (up to {@code wcs.length}). */
        SVCPollCq poll(IbvWC[] wcs) throws IOException;

        /** {@code ibv_destroy_cq} (and its completion channel). */
        void destroy() throws IOException;
    }

    /** An {@code ibv_qp}. */
    interface Qp {
        /** The native QP number. */
        int qpNum() throws IOException;

        /** Builds a stateful {@code ibv_post_send} over {@code wrs} (serialized once). */
        SVCPostSend postSend(List<IbvSendWR> wrs) throws IOException;

        /** Builds a stateful {@code ibv_post_recv} over {@code wrs} (serialized once). */
        SVCPostRecv postRecv(List<IbvRecvWR> wrs) throws IOException;
    }
}
