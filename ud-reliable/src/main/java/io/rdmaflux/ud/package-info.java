/**
 * The reliable UD channel kind ({@link io.rdmaflux.core.channel.ChannelKind#RELIABLE_UD}, seed 003 &sect;4):
 * per node and rail one UD receive queue pair with a static receive pool shared by all peers, K send queue pairs
 * used in round robin and an address handle per peer ({@link io.rdmaflux.ud.UdPort}); per channel a share of
 * them made reliable and ordered by DR-style acknowledgement ({@link io.rdmaflux.ud.dr.DrEndpoint}) that carries
 * the RC send/receive channel's work requests ({@link io.rdmaflux.ud.ReliableDatagramQp}). Entry point:
 * {@link io.rdmaflux.ud.UdChannelProvider}, found by {@link java.util.ServiceLoader}.
 */
@NullMarked
package io.rdmaflux.ud;

import org.jspecify.annotations.NullMarked;
