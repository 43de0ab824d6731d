package io.rdmaflux.verbs;

/** Queue pair transport type. */
public enum QpType {
    /** Reliable connected: in-order, acknowledged, SEND and RDMA ops, messages up to the device limit. */
    RC,
    /** Unreliable datagram: SEND only, one MTU per datagram, may be dropped, no connection. */
    UD
}
