package io.rdmaflux.ud.dr;

/**
 * How a {@link DrEndpoint} recovers lost VFRAGs.
 */
public enum RetransmitMode {
    /**
     * Selective: the receiver keeps VFRAGs that arrive ahead of its ESN and reports them in the ACK's SACK
     * bitmap; the sender retransmits only the VFRAGs missing (seed 003 &sect;4.2: "retransmission occurs ...
     * when the receiver responds with an acknowledgement indicating some portion of the VFRAG was not received").
     */
    SELECTIVE,
    /**
     * Go-back-N, for comparison: the receiver drops every VFRAG but the one at its ESN, and on a timeout or a
     * hole the sender retransmits everything from the oldest unacknowledged PSN.
     */
    GO_BACK_N
}
