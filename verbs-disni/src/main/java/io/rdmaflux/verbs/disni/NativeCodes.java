package io.rdmaflux.verbs.disni;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;

/**
 * The numeric codes of {@code verbs.h} and {@code rdma_cma.h} that cross {@link RdmaSeam}, and the
 * tables between them and the SPI's enums. DiSNI passes these integers through unchanged (its
 * {@code IbvWC.IbvWcStatus} ordinals and {@code IbvSendWR.IBV_WR_*} constants are the same numbers;
 * a test checks that against the jar).
 *
 * <p>Statuses with no SPI counterpart map to the nearest SPI status, with the native name kept in the
 * completion's detail: LOC_ACCESS_ERR and MW_BIND_ERR → LOC_PROT_ERR; REM_INV_RD_REQ_ERR →
 * REM_INV_REQ_ERR; REM_ABORT_ERR → REM_OP_ERR; RESP_TIMEOUT_ERR → RETRY_EXC_ERR (the responder went
 * silent); everything else → GENERAL_ERR.
 */
final class NativeCodes {
    private NativeCodes() {
    }

    // ibv_wc_status
    static final int WC_SUCCESS = 0;
    static final int WC_LOC_LEN_ERR = 1;
    static final int WC_LOC_QP_OP_ERR = 2;
    static final int WC_LOC_EEC_OP_ERR = 3;
    static final int WC_LOC_PROT_ERR = 4;
    static final int WC_WR_FLUSH_ERR = 5;
    static final int WC_MW_BIND_ERR = 6;
    static final int WC_BAD_RESP_ERR = 7;
    static final int WC_LOC_ACCESS_ERR = 8;
    static final int WC_REM_INV_REQ_ERR = 9;
    static final int WC_REM_ACCESS_ERR = 10;
    static final int WC_REM_OP_ERR = 11;
    static final int WC_RETRY_EXC_ERR = 12;
    static final int WC_RNR_RETRY_EXC_ERR = 13;
    static final int WC_LOC_RDD_VIOL_ERR = 14;
    static final int WC_REM_INV_RD_REQ_ERR = 15;
    static final int WC_REM_ABORT_ERR = 16;
    static final int WC_INV_EECN_ERR = 17;
    static final int WC_INV_EEC_STATE_ERR = 18;
    static final int WC_FATAL_ERR = 19;
    static final int WC_RESP_TIMEOUT_ERR = 20;
    static final int WC_GENERAL_ERR = 21;

    private static final String[] WC_STATUS_NAMES = {"SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
        "LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
        "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR",
        "REM_ABORT_ERR", "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR"};

    private static final WcStatus[] WC_STATUS = {WcStatus.SUCCESS, WcStatus.LOC_LEN_ERR, WcStatus.LOC_QP_OP_ERR,
        WcStatus.LOC_QP_OP_ERR, WcStatus.LOC_PROT_ERR, WcStatus.WR_FLUSH_ERR, WcStatus.LOC_PROT_ERR, WcStatus.GENERAL_ERR,
        WcStatus.LOC_PROT_ERR, WcStatus.REM_INV_REQ_ERR, WcStatus.REM_ACCESS_ERR, WcStatus.REM_OP_ERR, WcStatus.RETRY_EXC_ERR,
        WcStatus.RNR_RETRY_EXC_ERR, WcStatus.GENERAL_ERR, WcStatus.REM_INV_REQ_ERR, WcStatus.REM_OP_ERR, WcStatus.GENERAL_ERR,
        WcStatus.GENERAL_ERR, WcStatus.GENERAL_ERR, WcStatus.RETRY_EXC_ERR, WcStatus.GENERAL_ERR};

    // ibv_wc_opcode
    static final int WC_SEND = 0;
    static final int WC_RDMA_WRITE = 1;
    static final int WC_RDMA_READ = 2;
    static final int WC_COMP_SWAP = 3;
    static final int WC_FETCH_ADD = 4;
    static final int WC_BIND_MW = 5;
    static final int WC_RECV = 128;
    static final int WC_RECV_RDMA_WITH_IMM = 129;

    // ibv_wc_flags
    static final int WC_FLAG_GRH = 1;
    static final int WC_FLAG_WITH_IMM = 2;

    // ibv_wr_opcode
    static final int WR_RDMA_WRITE = 0;
    static final int WR_RDMA_WRITE_WITH_IMM = 1;
    static final int WR_SEND = 2;
    static final int WR_SEND_WITH_IMM = 3;
    static final int WR_RDMA_READ = 4;
    static final int WR_ATOMIC_CMP_AND_SWP = 5;
    static final int WR_ATOMIC_FETCH_AND_ADD = 6;

    // ibv_send_flags
    static final int SEND_FENCE = 1;
    static final int SEND_SIGNALED = 2;
    static final int SEND_SOLICITED = 4;
    static final int SEND_INLINE = 8;

    // ibv_access_flags
    static final int ACCESS_LOCAL_WRITE = 1;
    static final int ACCESS_REMOTE_WRITE = 2;
    static final int ACCESS_REMOTE_READ = 4;
    static final int ACCESS_REMOTE_ATOMIC = 8;

    // ibv_qp_type
    static final byte QPT_RC = 2;

    // rdma_cm_event_type
    static final int CM_ADDR_RESOLVED = 0;
    static final int CM_ADDR_ERROR = 1;
    static final int CM_ROUTE_RESOLVED = 2;
    static final int CM_ROUTE_ERROR = 3;
    static final int CM_CONNECT_REQUEST = 4;
    static final int CM_CONNECT_RESPONSE = 5;
    static final int CM_CONNECT_ERROR = 6;
    static final int CM_UNREACHABLE = 7;
    static final int CM_REJECTED = 8;
    static final int CM_ESTABLISHED = 9;
    static final int CM_DISCONNECTED = 10;
    static final int CM_DEVICE_REMOVAL = 11;
    static final int CM_TIMEWAIT_EXIT = 15;

    private static final String[] CM_EVENT_NAMES = {"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR",
        "CONNECT_REQUEST", "CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED", "DISCONNECTED",
        "DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE", "TIMEWAIT_EXIT"};

    /** IB CM reject reason "invalid service ID": nothing listens at the port (refused). */
    static final int REJ_INVALID_SERVICE_ID = 8;
    /** IB CM reject reason "consumer defined": the listener's owner rejected (here: destroyed the id). */
    static final int REJ_CONSUMER_DEFINED = 28;

    /** Most private data bytes {@code rdma_connect} carries on InfiniBand (RoCE/iWARP allow more). */
    static final int MAX_PRIVATE_DATA = 56;

    /** The SPI status of a native {@code ibv_wc_status}; unknown codes are GENERAL_ERR. */
    static WcStatus status(int nativeStatus) {
        return nativeStatus >= 0 && nativeStatus < WC_STATUS.length ? WC_STATUS[nativeStatus] : WcStatus.GENERAL_ERR;
    }

    /** The {@code verbs.h} name of a native status, e.g. {@code IBV_WC_RETRY_EXC_ERR}. */
    static String statusName(int nativeStatus) {
        return nativeStatus >= 0 && nativeStatus < WC_STATUS_NAMES.length
            ? "IBV_WC_" + WC_STATUS_NAMES[nativeStatus] : "ibv_wc_status " + nativeStatus;
    }

    private static final String[] WC_STATUS_MEANINGS = {"", "a receive too small for the message",
        "a malformed work request or a QP in the wrong state", "local EE context error",
        "an SGE outside its region, a bad lkey, or missing local access", "the QP is in ERROR",
        "memory window bind error", "bad response from the responder", "local access error (e.g. a READ into a region without LOCAL_WRITE)",
        "the responder rejected the request (e.g. a message above its receive buffer)",
        "bad rkey, an address outside the remote region, or missing remote access", "the responder failed the operation (e.g. its receive had a bad lkey)",
        "transport retries exhausted: the peer or the path is gone", "receiver-not-ready retries exhausted: the peer posted no receive in time",
        "RDD violation", "the responder rejected the RDMA READ", "the responder aborted", "invalid EE context number",
        "invalid EE context state", "fatal device error", "response timeout", "general error"};

    /** A completion's detail for a native status: its name, what it means, the vendor error. */
    static String describe(int nativeStatus, int vendorErr) {
        String meaning = nativeStatus > 0 && nativeStatus < WC_STATUS_MEANINGS.length ? ": " + WC_STATUS_MEANINGS[nativeStatus] : "";
        return statusName(nativeStatus) + meaning + " (vendor_err 0x" + Integer.toHexString(vendorErr) + ")";
    }

    /** The native status that stands for an SPI status (the test double's direction). */
    static int nativeStatus(WcStatus status) {
        return switch (status) {
            case SUCCESS -> WC_SUCCESS;
            case LOC_LEN_ERR -> WC_LOC_LEN_ERR;
            case LOC_QP_OP_ERR -> WC_LOC_QP_OP_ERR;
            case LOC_PROT_ERR -> WC_LOC_PROT_ERR;
            case WR_FLUSH_ERR -> WC_WR_FLUSH_ERR;
            case REM_ACCESS_ERR -> WC_REM_ACCESS_ERR;
            case REM_INV_REQ_ERR -> WC_REM_INV_REQ_ERR;
            case REM_OP_ERR -> WC_REM_OP_ERR;
            case RETRY_EXC_ERR -> WC_RETRY_EXC_ERR;
            case RNR_RETRY_EXC_ERR -> WC_RNR_RETRY_EXC_ERR;
            case GENERAL_ERR -> WC_GENERAL_ERR;
        };
    }

    /**
     * The SPI opcode of a successful completion's native {@code ibv_wc_opcode}.
     *
     * @throws IllegalArgumentException for memory-window binds, which this provider never posts
     */
    static WcOpcode opcode(int nativeOpcode) {
        return switch (nativeOpcode) {
            case WC_SEND -> WcOpcode.SEND;
            case WC_RDMA_WRITE -> WcOpcode.RDMA_WRITE;
            case WC_RDMA_READ -> WcOpcode.RDMA_READ;
            case WC_COMP_SWAP -> WcOpcode.COMP_SWAP;
            case WC_FETCH_ADD -> WcOpcode.FETCH_ADD;
            case WC_RECV -> WcOpcode.RECV;
            case WC_RECV_RDMA_WITH_IMM -> WcOpcode.RECV_RDMA_WITH_IMM;
            default -> throw new IllegalArgumentException("ibv_wc_opcode " + nativeOpcode + " is not one this provider posts");
        };
    }

    /** The native {@code ibv_wc_opcode} of an SPI opcode (the test double's direction). */
    static int nativeWcOpcode(WcOpcode opcode) {
        return switch (opcode) {
            case SEND -> WC_SEND;
            case RDMA_WRITE -> WC_RDMA_WRITE;
            case RDMA_READ -> WC_RDMA_READ;
            case COMP_SWAP -> WC_COMP_SWAP;
            case FETCH_ADD -> WC_FETCH_ADD;
            case RECV -> WC_RECV;
            case RECV_RDMA_WITH_IMM -> WC_RECV_RDMA_WITH_IMM;
        };
    }

    /** The native {@code ibv_wr_opcode} of a send work request's opcode. */
    static int wrOpcode(WrOpcode opcode) {
        return switch (opcode) {
            case SEND -> WR_SEND;
            case SEND_WITH_IMM -> WR_SEND_WITH_IMM;
            case RDMA_WRITE -> WR_RDMA_WRITE;
            case RDMA_WRITE_WITH_IMM -> WR_RDMA_WRITE_WITH_IMM;
            case RDMA_READ -> WR_RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> WR_ATOMIC_CMP_AND_SWP;
            case ATOMIC_FETCH_AND_ADD -> WR_ATOMIC_FETCH_AND_ADD;
        };
    }

    /** The SPI opcode of a native {@code ibv_wr_opcode} (the test double's direction). */
    static WrOpcode wrOpcode(int nativeOpcode) {
        return switch (nativeOpcode) {
            case WR_SEND -> WrOpcode.SEND;
            case WR_SEND_WITH_IMM -> WrOpcode.SEND_WITH_IMM;
            case WR_RDMA_WRITE -> WrOpcode.RDMA_WRITE;
            case WR_RDMA_WRITE_WITH_IMM -> WrOpcode.RDMA_WRITE_WITH_IMM;
            case WR_RDMA_READ -> WrOpcode.RDMA_READ;
            case WR_ATOMIC_CMP_AND_SWP -> WrOpcode.ATOMIC_CMP_AND_SWP;
            case WR_ATOMIC_FETCH_AND_ADD -> WrOpcode.ATOMIC_FETCH_AND_ADD;
            default -> throw new IllegalArgumentException("ibv_wr_opcode " + nativeOpcode + " is not one this provider posts");
        };
    }

    /** The completion opcode a send work request's success reports. */
    static WcOpcode sendCompletionOpcode(WrOpcode opcode) {
        return switch (opcode) {
            case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
        };
    }

    /** Native {@code IBV_ACCESS_*} flags of SPI {@link Access} flags. */
    static int access(int spiAccess) {
        int a = 0;
        if ((spiAccess & Access.LOCAL_WRITE) != 0) a |= ACCESS_LOCAL_WRITE;
        if ((spiAccess & Access.REMOTE_WRITE) != 0) a |= ACCESS_REMOTE_WRITE;
        if ((spiAccess & Access.REMOTE_READ) != 0) a |= ACCESS_REMOTE_READ;
        if ((spiAccess & Access.REMOTE_ATOMIC) != 0) a |= ACCESS_REMOTE_ATOMIC;
        return a;
    }

    /** SPI {@link Access} flags of native ones (the test double's direction). */
    static int spiAccess(int nativeAccess) {
        int a = 0;
        if ((nativeAccess & ACCESS_LOCAL_WRITE) != 0) a |= Access.LOCAL_WRITE;
        if ((nativeAccess & ACCESS_REMOTE_WRITE) != 0) a |= Access.REMOTE_WRITE;
        if ((nativeAccess & ACCESS_REMOTE_READ) != 0) a |= Access.REMOTE_READ;
        if ((nativeAccess & ACCESS_REMOTE_ATOMIC) != 0) a |= Access.REMOTE_ATOMIC;
        return a;
    }

    /** The {@code rdma_cma.h} name of a CM event type. */
    static String cmEventName(int type) {
        return type >= 0 && type < CM_EVENT_NAMES.length ? "RDMA_CM_EVENT_" + CM_EVENT_NAMES[type] : "rdma_cm_event " + type;
    }

    /**
     * Immediate data as the wire carries it: verbs' {@code imm_data} is big-endian ({@code __be32}) and
     * the SPI's is host order, so the provider swaps on little-endian hosts (htonl/ntohl).
     */
    static int toWireImmediate(int hostOrder) {
        return java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN ? Integer.reverseBytes(hostOrder) : hostOrder;
    }

    /** Inverse of {@link #toWireImmediate(int)}. */
    static int fromWireImmediate(int wire) {
        return toWireImmediate(wire);
    }
}
