package io.rdmaflux.verbs.soft;

/**
 * What a {@link SoftFrame} carries. One RC message is one frame (the soft NIC does not segment RC
 * messages into MTU packets: ordering, acknowledgement and retry work per message, with the
 * message's PSN), so a PSN here numbers work requests.
 */
public enum FrameType {
    /** RC SEND or SEND_WITH_IMM request; payload = the message. */
    SEND,
    /** RC RDMA WRITE or RDMA_WRITE_WITH_IMM request; payload = the data for {@code remoteAddress}/{@code rkey}. */
    RDMA_WRITE,
    /** RC RDMA READ request for {@code length} bytes at {@code remoteAddress}/{@code rkey}; no payload. */
    RDMA_READ_REQUEST,
    /** Response to a READ request; payload = the data read, {@code psn} = the request's. */
    RDMA_READ_RESPONSE,
    /** Cumulative acknowledgement of every request up to and including {@code psn}. */
    ACK,
    /**
     * Negative acknowledgement of {@code psn} (earlier PSNs are acknowledged); {@code status} is
     * RNR_RETRY_EXC_ERR for receiver-not-ready (retried by the requester) or the error the
     * requester completes the work request with (REM_ACCESS_ERR, REM_INV_REQ_ERR, REM_OP_ERR).
     */
    NAK,
    /** A UD datagram; payload = the datagram, copied into the frame. */
    UD_SEND,
    /**
     * NAK - PSN sequence error (IBA Vol. 1, chapter 9.7, reliable service): the responder got a request after a gap; {@code psn} is
     * the PSN it expects next, every earlier one is acknowledged, and the requester retransmits from it
     * (go-back-N). After the first seven because the ordinal is the IP fabric's type code.
     */
    SEQUENCE_NAK,
    /**
     * RC ATOMIC_FETCH_AND_ADD request on the 8 bytes at {@code remoteAddress}/{@code rkey}; payload = the
     * 16 operand bytes ({@link SoftAtomics}). New types go last: the ordinal is the IP fabric's type code.
     */
    ATOMIC_FETCH_ADD,
    /** RC ATOMIC_CMP_AND_SWP request; as {@link #ATOMIC_FETCH_ADD}. */
    ATOMIC_CMP_SWAP,
    /**
     * Response to an atomic request (InfiniBand's ATOMIC Acknowledge); payload = the 8-byte original value,
     * {@code psn} = the request's. Like a READ response it also acknowledges every earlier request.
     */
    ATOMIC_RESPONSE
}
