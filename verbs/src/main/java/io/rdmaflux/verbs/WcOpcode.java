package io.rdmaflux.verbs;

/** Work completion opcodes ({@code ibv_wc_opcode} subset). */
public enum WcOpcode {
    SEND,
    RDMA_WRITE,
    RDMA_READ,
    /** A receive consumed by SEND or SEND_WITH_IMM. */
    RECV,
    /** A receive consumed by RDMA_WRITE_WITH_IMM (byte length 0, immediate set). */
    RECV_RDMA_WITH_IMM,
    /** An {@link WrOpcode#ATOMIC_CMP_AND_SWP} ({@code IBV_WC_COMP_SWAP}); byte length 8. */
    COMP_SWAP,
    /** An {@link WrOpcode#ATOMIC_FETCH_AND_ADD} ({@code IBV_WC_FETCH_ADD}); byte length 8. */
    FETCH_ADD
}
