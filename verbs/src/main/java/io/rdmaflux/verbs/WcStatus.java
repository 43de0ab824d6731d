package io.rdmaflux.verbs;

/** Work completion status ({@code ibv_wc_status} subset), with the verbs meaning. */
public enum WcStatus {
    SUCCESS,
    /** Local length error: a receive too small for the message, or a UD datagram above the MTU. */
    LOC_LEN_ERR,
    /** Local QP operation error (e.g. a malformed work request). */
    LOC_QP_OP_ERR,
    /** Local protection error: an SGE outside its region, a bad lkey, or missing local access. */
    LOC_PROT_ERR,
    /** Work request flushed because the QP is in ERROR. */
    WR_FLUSH_ERR,
    /** Remote access error: bad rkey, out-of-bounds remote address, or missing remote access right. */
    REM_ACCESS_ERR,
    /** Remote invalid request (e.g. a message above the responder's limit). */
    REM_INV_REQ_ERR,
    /** Remote operation error. */
    REM_OP_ERR,
    /** Transport retry counter exceeded: the peer or the path is gone. */
    RETRY_EXC_ERR,
    /** Receiver-not-ready retry counter exceeded: the peer posted no receive in time. */
    RNR_RETRY_EXC_ERR,
    /** Any other failure. */
    GENERAL_ERR;

    public boolean isError() {
        return this != SUCCESS;
    }
}
