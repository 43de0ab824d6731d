package io.rdmaflux.verbs;

/**
 * A work completion ({@code ibv_wc}). Providers hand a reused instance to the
 * {@link CompletionSink}; it is valid only during the callback, so copy what you keep.
 */
public final class WorkCompletion {
    private long wrId;
    private WcStatus status = WcStatus.SUCCESS;
    private WcOpcode opcode = WcOpcode.SEND;
    private int byteLength;
    private int immediate;
    private boolean hasImmediate;
    private int qpNumber;
    private int sourceQpn;
    private String detail = "";

    /** Fills every field (providers call this); returns {@code this}. */
    public WorkCompletion set(long wrId, WcStatus status, WcOpcode opcode, int byteLength,
                              boolean hasImmediate, int immediate, int qpNumber, int sourceQpn, String detail) {
        this.wrId = wrId;
        // Reference fields are stored only when they change: a completion object is reused for every
        // completion a poll hands out, and on G1 each reference store into an old object costs a
        // card-marking barrier with a StoreLoad fence, several nanoseconds per completion.
        if (this.status != status) {
            this.status = status;
        }
        if (this.opcode != opcode) {
            this.opcode = opcode;
        }
        this.byteLength = byteLength;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
        this.qpNumber = qpNumber;
        this.sourceQpn = sourceQpn;
        if (this.detail != detail) {
            this.detail = detail;
        }
        return this;
    }

    /** The work request id given when the request was posted. */
    public long wrId() {
        return wrId;
    }

    public WcStatus status() {
        return status;
    }

    public boolean isSuccess() {
        return status == WcStatus.SUCCESS;
    }

    public WcOpcode opcode() {
        return opcode;
    }

    /** Bytes received (receives) or transferred (RDMA READ); 0 for RDMA_WRITE_WITH_IMM receives. */
    public int byteLength() {
        return byteLength;
    }

    public boolean hasImmediate() {
        return hasImmediate;
    }

    /** Immediate data when {@link #hasImmediate()}. */
    public int immediate() {
        return immediate;
    }

    /** The local QP the work request was posted on. */
    public int qpNumber() {
        return qpNumber;
    }

    /** For UD receives, the sender's QP number. */
    public int sourceQpn() {
        return sourceQpn;
    }

    /** For errors, a human-readable reason naming the value at fault (empty on success). */
    public String detail() {
        return detail;
    }

    /** A copy safe to keep after the callback. */
    public WorkCompletion copy() {
        return new WorkCompletion().set(wrId, status, opcode, byteLength, hasImmediate, immediate, qpNumber, sourceQpn, detail);
    }

    @Override
    public String toString() {
        return "wc{id=" + wrId + ", " + opcode + ", " + status + ", len=" + byteLength
            + (hasImmediate ? ", imm=0x" + Integer.toHexString(immediate) : "") + ", qp=" + qpNumber
            + (sourceQpn != 0 ? ", srcQp=" + sourceQpn : "") + (detail.isEmpty() ? "" : ", " + detail) + "}";
    }
}
