package io.rdmaflux.core.channel;

/**
 * A scheduling policy over the subchannels of one connection: the communication scheduler of seed
 * 000 &sect;4.1/&sect;4.4 asks it where each message goes. Created per connection by a
 * {@link ChannelFactory}.
 *
 * <p><b>Contract:</b> {@link #select} returns the index of a subchannel whose
 * {@link Subchannel#canSend()} is true, or -1 to wait (the connection retries on its next duty
 * cycle; no thread blocks). Every fragment of one message goes on the subchannel chosen for its
 * first fragment, in order, so a subchannel reassembles messages by itself; order between
 * messages on different subchannels is restored by PSN at the receiver.
 * {@link #onMessageCompleted} reports each message's delivery (its last fragment's send
 * completion) with the measured time, which adaptive policies feed back into their weights (seed
 * 000 &sect;4.5, eq. 1&ndash;4).
 *
 * <p><b>Concurrency:</b> called on the progress thread only; needs no synchronization.
 */
public interface SubchannelScheduler {
    /**
     * Chooses the subchannel for the next message.
     *
     * @param psn          the message's PSN
     * @param lengthBytes  the message length
     * @param subchannels  the connection's subchannels, in rail order (do not modify)
     * @return an index into {@code subchannels} whose {@code canSend()} is true, or -1 to wait
     */
    int select(int psn, int lengthBytes, Subchannel[] subchannels);

    /**
     * A message sent on {@code subchannel} was delivered (RC send completion of its last fragment).
     *
     * @param elapsedNs from posting its first fragment to the completion of its last, in ns of the node's clock
     */
    default void onMessageCompleted(Subchannel subchannel, int psn, int lengthBytes, long elapsedNs) {
    }
}
