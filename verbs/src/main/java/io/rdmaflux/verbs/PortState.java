package io.rdmaflux.verbs;

/** Link state of a {@link Port} ({@code ibv_port_state} subset). */
public enum PortState {
    /** Link up, traffic flows. */
    ACTIVE,
    /** Link down: RC QPs using it go to ERROR with RETRY_EXC_ERR; UD datagrams are dropped. */
    DOWN
}
