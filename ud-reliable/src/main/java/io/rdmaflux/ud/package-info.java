/**
 * The reliable UD channel kind ({@link io.rdmaflux.core.channel.ChannelKind#RELIABLE_UD}, seed 003 &sect;4):
 * per node and rail one UD receive queue pair with a static receive pool shared by all peers, K send queue pairs
 * used in round robin and an address handle per peer ({@link io.rdmaflux.ud.UdPort}); per channel a share of
 * them made reliable and ordered by DR-style acknowledgement ({@link io.rdmaflux.ud.dr.DrEndpoint}) that carries
 * the RC send/receive channel's work requests ({@link io.rdmaflux.ud.ReliableDatagramQp}). Entry point:
 * {@link io.rdmaflux.ud.UdChannelProvider}, found by {@link java.util.ServiceLoader}.
 *
 * <p>Also the kind {@link io.rdmaflux.core.channel.ChannelKind#RC_DR} (seed 003 &sect;3.1): the same DR queue pair with
 * its datagrams on an RC queue pair of each connection rail's own ({@link io.rdmaflux.ud.RcDatagramRail}), for
 * end-to-end CRC32C and acknowledgement over RC. Entry point: {@link io.rdmaflux.ud.RcDrChannelProvider}.
 */
@NullMarked
package io.rdmaflux.ud;

import org.jspecify.annotations.NullMarked;
