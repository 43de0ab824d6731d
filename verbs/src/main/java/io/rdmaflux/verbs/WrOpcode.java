package io.rdmaflux.verbs;

/** Send work request opcodes ({@code ibv_wr_opcode} subset). */
public enum WrOpcode {
    SEND,
    SEND_WITH_IMM,
    RDMA_WRITE,
    RDMA_WRITE_WITH_IMM,
    RDMA_READ
}
