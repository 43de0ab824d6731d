package io.rdmaflux.verbs;

/**
 * A UD address handle ({@code ibv_ah}): the path to one remote port. Create one per peer port and
 * reuse it for every datagram to any QP there.
 */
public interface AddressHandle extends AutoCloseable {
    /** The remote port this handle reaches. */
    PortAddress destination();

    /** The local port datagrams leave from. */
    Port port();

    @Override
    void close();
}
