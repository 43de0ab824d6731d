package io.rdmaflux.core.channel;

import io.rdmaflux.core.internal.rc.RcChannelProvider;
import io.rdmaflux.verbs.VerbsException;

/**
 * Opens the {@link Channel}s of one {@link ChannelKind}: where a new kind plugs into a node
 * ({@code RdmaNode.Builder.channelProvider(..)}). A node offers the kinds it has providers for (the RC
 * send/receive channel always); a connection asks for a kind per rail with
 * {@code ConnectionSpec.channelKind(..)}, and the handshake refuses a kind the accepting node does not
 * offer, naming it.
 *
 * <p><b>Concurrency:</b> called on the setup path (connect, accept), possibly from several threads at
 * once; an implementation keeps no per-connection state of its own.
 */
public interface ChannelProvider {
    /** The kind of every channel this provider opens. */
    ChannelKind kind();

    /**
     * Opens one rail's channel, its queue pair not yet connected: the node sends
     * {@link Channel#localEndpoint()} in the handshake and calls {@link Channel#connect} with the peer's.
     *
     * @throws VerbsException if the device refuses a resource (nothing is left allocated)
     */
    Channel open(ChannelSetup setup);

    /** The RC send/receive channel ({@link ChannelKind#RC_SEND_RECV}). */
    static ChannelProvider rcSendRecv() {
        return RcChannelProvider.INSTANCE;
    }
}
