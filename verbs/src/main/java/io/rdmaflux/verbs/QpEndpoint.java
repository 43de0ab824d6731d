package io.rdmaflux.verbs;

/**
 * What a peer needs to connect an RC QP to this one, as exchanged by a connection manager: the
 * port address, the QP number, the starting PSN and the path MTU.
 *
 * @param address  where the QP's port is reached
 * @param qpn      the QP number
 * @param startPsn the first packet sequence number the QP sends (24 bits)
 * @param mtuBytes the path MTU in bytes
 */
public record QpEndpoint(PortAddress address, int qpn, int startPsn, int mtuBytes) {
}
