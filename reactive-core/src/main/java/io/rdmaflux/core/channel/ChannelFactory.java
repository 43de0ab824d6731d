package io.rdmaflux.core.channel;

import java.util.List;

/**
 * The plug-in point for multi-rail policies: {@code ConnectionSpec.rails(2).striping(factory)}
 * makes every connection opened with that spec build its {@link SubchannelScheduler} with
 * {@code factory}. A striping module (e.g. {@code rail-striping}) ships factories for binding,
 * round robin, weighted and adaptive policies; reactive-core needs none of them, its default is
 * {@link #roundRobin()}, which on one rail is the plain single-rail path.
 *
 * <h2>How a striping layer plugs in</h2>
 * <pre>{@code
 * ChannelFactory adaptive = (spec, subchannels) -> new SubchannelScheduler() {
 *     public int select(int psn, int lengthBytes, Subchannel[] s) { ... pick by weights, -1 to wait ... }
 *     public void onMessageCompleted(Subchannel sc, int psn, int len, long elapsedNs) { ... update weights ... }
 * };
 * node.connect(address, ConnectionSpec.rails(2).striping(adaptive));
 * }</pre>
 *
 * <p>Each subchannel is an RC QP on its own port (rail), with its own receive buffers and credits,
 * negotiated through the connection manager (one endpoint per rail in {@code CmParams}). Every
 * DATA frame carries the connection-wide PSN; the receiver's ESN and bounded out-of-order queue
 * (window {@code ConnectionSpec.reorderWindow}) deliver messages in PSN order whichever rail they
 * took (seed 000 &sect;5.2). Closing sends one CLOSE frame per subchannel (seed 000 &sect;5.3).
 *
 * <p><b>Concurrency:</b> {@link #create} is called on the setup path, once per connection; the
 * scheduler it returns is then used on the progress thread only.
 */
@FunctionalInterface
public interface ChannelFactory {
    /**
     * Creates the scheduler of one connection.
     *
     * @param subchannels the connection's subchannels in rail order (at least one)
     */
    SubchannelScheduler create(List<? extends Subchannel> subchannels);

    /** Round robin over the subchannels that can send (seed 000 &sect;4.4); on one rail, always rail 0. */
    static ChannelFactory roundRobin() {
        return subchannels -> new RoundRobinScheduler();
    }
}
