package io.rdmaflux.core.channel;

import io.rdmaflux.core.RdmaMessage;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.verbs.QpEndpoint;
import org.agrona.DirectBuffer;

/**
 * One path to the peer on one rail: the connection-to-channel half of the Channel SPI (the events of
 * {@link ChannelEvents} are the other half). A channel <b>owns</b> everything of its path &mdash; the
 * queue pair and completion queue, its send slots and receive buffers, selective signalling, frame
 * encoding and decoding, and its per-rail buffer credits &mdash; and the connection reaches it only
 * through these commands and queries. Message credits cross as values
 * ({@link ChannelEvents#takeMessageCreditTotal()}, {@link ChannelEvents#onMessageCreditTotal}).
 *
 * <h2>Commands</h2>
 * Credit-taking frames ({@link #sendData}, the packed frame of {@link #openPack}/{@link #packAppend}/
 * {@link #closePack}, {@link #sendRts}) need {@link #canSend()} first and carry a completion token
 * ({@link WorkRequestTokens}) that {@link ChannelEvents#onSendCompleted} hands back. Control frames
 * ({@link #sendCts}, {@link #sendRailDown}, {@link #sendInboundClosed}, {@link #sendCreditFrame},
 * {@link #sendGracefulClose}) take no credit and answer false when they cannot go now (call again on a
 * later duty cycle). {@link #writeStripe} posts an RDMA WRITE and its FIN (seed 000 &sect;5.3). The READ
 * rendezvous adds {@link #sendRtsRead} (credit-taking), {@link #readStripe} (an RDMA READ, reported by
 * {@link ChannelEvents#onReadCompleted}) and {@link #sendReadFin} (control); they have defaults for kinds
 * whose {@link ChannelCapabilities#rdmaRead()} is false, which the connection then never calls.
 *
 * <h2>Where a new kind plugs in</h2>
 * A new {@link ChannelKind} implements this interface, reports {@link #kind()} and
 * {@link #capabilities()}, and is created by the node for the rails whose agreed kind it is. The
 * connection's stages never test a channel's class.
 *
 * <p><b>Concurrency:</b> progress thread only, after construction; the read-only {@link Subchannel}
 * view is what a scheduling policy sees.
 */
public interface Channel extends Subchannel, AutoCloseable {
    /** The kind of this channel. */
    ChannelKind kind();

    /** What this channel can do (inline sends, RDMA READ/WRITE, ordering). */
    default ChannelCapabilities capabilities() {
        return kind().capabilities();
    }

    /** Sets who hears this channel's events; once, before the first {@link #doWork}. */
    void events(ChannelEvents events);

    /** What the peer needs to connect to this channel (sent in the connection handshake). */
    QpEndpoint localEndpoint();

    /**
     * Connects to the peer's endpoint, with what the peer's handshake said of its side.
     *
     * @param peerBufferBytes    the peer's receive buffer size: frames sent are at most this long, bytes
     * @param peerReceiveBuffers the peer's DATA receive buffers: the most buffer credits this side can hold
     * @param initialCredits     buffer credits the peer granted in its handshake
     * @param connecting         whether this is the connecting side, which sends the first frame
     */
    void connect(QpEndpoint remote, int peerBufferBytes, int peerReceiveBuffers, int initialCredits, boolean connecting);

    /** Polls completions and sends a CREDIT frame if one is due. @return work done */
    int doWork(long nowNs);

    /**
     * Asks the channel to call {@code hint} whenever work for it arrives from outside the connection's duty
     * cycle (a completion added to its completion queue, from any thread), so that a busy progress engine may
     * skip the idle connection until then ({@code ProgressEngine.Registration#signalDriven}). Called once,
     * before the connection's first duty cycle.
     *
     * @return whether the channel calls {@code hint} for every such arrival; false (the default) if work can
     *         reach it unsignalled (a ring in memory the peer writes, a datagram timer), and the connection is
     *         then visited every duty cycle
     */
    default boolean signalArrivals(Runnable hint) {
        return false;
    }

    /**
     * For a channel whose {@link #signalArrivals} returned true: whether, idle now, all its work still comes
     * with a signal. False while it has work that arrives unsignalled for a time (a ring it polls, a timer it
     * must run soon): the connection is then visited every duty cycle until this is true again. Progress
     * thread. Default true.
     */
    default boolean waitsOnlyForSignals() {
        return true;
    }

    // ---------------------------------------------------------------- credit-taking frames

    /** Posts one DATA frame of {@code length} bytes of {@code message} from {@code srcOffset}; one buffer credit. */
    void sendData(RdmaMessage message, int srcOffset, int length, boolean first, boolean last, int psn, long token);

    /** Starts a packed DATA frame whose first message has PSN {@code psn}. */
    void openPack(int psn);

    /** Copies {@code message} (the next PSN) into the open packed frame; the caller may release it right after. */
    void packAppend(RdmaMessage message);

    /** Posts the open packed frame; one buffer credit for all its messages. */
    void closePack(long token);

    /** Posts an RTS for a rendezvous message (seed 001 &sect;3, Fig. 2); one buffer credit. */
    void sendRts(int psn, int messageLength, long token);

    /** Posts the frame held back by selective signalling, signalled. */
    void flushSends();

    // ---------------------------------------------------------------- RDMA WRITE rendezvous

    /** Whether one stripe (an RDMA WRITE and its FIN) can be posted now. */
    boolean canWriteStripe();

    /** Posts one stripe: an RDMA WRITE into the peer's buffer at {@code stripeOffset}, then its FIN (seed 000 &sect;5.3). */
    void writeStripe(int psn, int messageLength, long localAddress, int lkey, long remoteAddress, int rkey,
                     int stripeOffset, int length, int stripes, int stripeIndex, long token);

    /** RDMA WRITEs posted and not completed. */
    int writesInFlight();

    // ---------------------------------------------------------------- RDMA READ rendezvous
    // defaults for kinds without it: ChannelCapabilities.rdmaRead() false, and the connection then never calls these

    /**
     * Posts an RTS_READ for a rendezvous message the peer RDMA-READs from {@code [address, +messageLength)}
     * with {@code rkey} (seed 001 &sect;3); one buffer credit, like {@link #sendRts}. The caller checked
     * {@link #canSend()}.
     *
     * @throws UnsupportedOperationException if this kind has no READ rendezvous
     */
    default void sendRtsRead(int psn, int messageLength, long address, int rkey, long token) {
        throw new UnsupportedOperationException(kind() + " channels have no READ rendezvous (ChannelCapabilities.rdmaRead)");
    }

    /** Whether one RDMA READ stripe can be posted now (room for it in the send queue). */
    default boolean canReadStripe() {
        return false;
    }

    /**
     * Posts one signalled RDMA READ of {@code length} bytes from the peer's {@code [remoteAddress, +length)}
     * ({@code rkey}) into local registered memory at {@code localAddress} ({@code lkey}); its success is
     * reported by {@link ChannelEvents#onReadCompleted} with {@code token}, its failure fails the channel
     * ({@link ChannelEvents#onFailure}, e.g. REM_ACCESS_ERR for a bad rkey or range). The caller checked
     * {@link #canReadStripe()}.
     *
     * @throws UnsupportedOperationException if this kind has no READ rendezvous
     */
    default void readStripe(long localAddress, int lkey, long remoteAddress, int rkey, int length, long token) {
        throw new UnsupportedOperationException(kind() + " channels post no RDMA READs (ChannelCapabilities.rdmaRead)");
    }

    /**
     * A READ_FIN: the READs of message {@code psn} completed here (or, with {@code flags}
     * {@link io.rdmaflux.core.frame.ReadFinFrameCodec#DISCARD}, it was dropped unread). A control frame.
     *
     * @return false if it cannot go now (call again later)
     */
    default boolean sendReadFin(int psn, int messageLength, int flags) {
        return false;
    }

    /**
     * Whether one atomic ({@link #postAtomic}) can be posted now: the channel is established, not failed,
     * and has room for another RDMA operation. False for a kind that posts no atomics.
     */
    default boolean canPostAtomic() {
        return false;
    }

    /**
     * Posts one signalled 8-byte atomic on the peer's word at {@code remoteAddress} ({@code rkey}, 8-byte
     * aligned): fetch-and-add of {@code compareAdd} ({@code fetchAdd}) or compare-and-swap of
     * {@code compareAdd} with {@code swap}; the word's original value lands in local registered memory at
     * {@code localAddress} ({@code lkey}, 8 bytes). Its success is reported like a READ's, by
     * {@link ChannelEvents#onReadCompleted} with {@code token}; its failure fails the channel. The caller
     * checked {@link #canPostAtomic()} and that the provider has atomics.
     *
     * @throws UnsupportedOperationException if this kind posts no atomics
     */
    default void postAtomic(boolean fetchAdd, long localAddress, int lkey, long remoteAddress, int rkey, long compareAdd, long swap,
                            long token) {
        throw new UnsupportedOperationException(kind() + " channels post no atomics");
    }

    /** RDMA READs (and atomics) posted and not completed. */
    default int readsInFlight() {
        return 0;
    }

    // ---------------------------------------------------------------- SPI for kinds built over this channel

    /**
     * Whether one bare RDMA WRITE ({@link #postWrite}) can be posted now: the channel is established, not
     * failed or closing, and fewer than its {@code maxWrites} WRITEs are in flight. False for a kind that
     * posts no bare WRITEs.
     */
    default boolean canPostWrite() {
        return false;
    }

    /**
     * Posts one RDMA WRITE of {@code length} bytes from local registered memory into the peer's
     * registered memory, on this channel's queue pair, behind every frame posted before it: RC places a
     * WRITE's data before the data of any SEND posted after it, which a kind built over this channel
     * (the eager ring of seed 001 &sect;4.1) uses to drain its ring when a control frame tells it to. Its
     * completion is reported as {@link ChannelEvents#onWriteCompleted} with {@code tag}; a failed WRITE
     * fails the channel. The caller checked {@link #canPostWrite()}.
     *
     * @param tag in [0, 2^28), handed back on completion
     * @return false if it could not be posted (the channel failed; {@link ChannelEvents#onFailure} was heard)
     * @throws UnsupportedOperationException if this kind posts no bare WRITEs
     */
    default boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag) {
        throw new UnsupportedOperationException(kind() + " channels post no bare RDMA WRITEs");
    }

    /**
     * {@link #postWrite(long, int, long, int, int, int)}, unsignalled when {@code signaled} is false (selective
     * signalling, as verbs users do to keep per-message completion work low, seed 001 &sect;4.3): the NIC
     * generates no completion for it; RC completes a send queue in order, so it is reported through
     * {@link ChannelEvents#onWriteCompleted} (with its {@code tag}, in posting order) when a later signalled
     * work request of this channel completes. The caller must post a signalled work request often enough
     * that unsignalled WRITEs do not hold {@link #canPostWrite()} down, and one after the last it needs
     * reported. The default posts it signalled (a kind that cannot leave completions out).
     *
     * @param tag in [0, 2^28), handed back on completion
     * @return false if it could not be posted (the channel failed)
     * @throws UnsupportedOperationException if this kind posts no bare WRITEs
     */
    default boolean postWrite(long localAddress, int lkey, long remoteAddress, int rkey, int length, int tag, boolean signaled) {
        return postWrite(localAddress, lkey, remoteAddress, rkey, length, tag);
    }

    /**
     * Sends a {@link FrameType#CHANNEL_CONTROL} frame carrying {@code length} bytes of {@code src} from
     * {@code offset}: a control message of a kind built over this channel, which the peer's channel hands
     * to {@link ChannelEvents#onChannelControl}. No credit; RC orders it after everything posted before.
     *
     * @param length in [1, {@link #maxFramePayloadBytes()}]
     * @return false if it cannot go now (no send buffer: call again later) or this kind carries none
     * @throws IllegalArgumentException if {@code length} is out of range
     */
    default boolean sendChannelControl(DirectBuffer src, int offset, int length) {
        return false;
    }

    // ---------------------------------------------------------------- one-sided communication (seed 002)

    /**
     * Whether this channel carries one-sided operations: bare RDMA WRITEs ({@link #postWrite}) and READs
     * ({@link #readStripe}) whose completions reach the connection ({@link ChannelEvents#onWriteCompleted},
     * {@link ChannelEvents#onReadCompleted}), and the one-sided control frames
     * ({@link #sendOneSidedControl}). False by default; a kind that decorates another and intercepts its
     * WRITE completions (the eager ring) leaves it false, and the connection then uses none of its rail
     * for one-sided work.
     */
    default boolean carriesOneSided() {
        return false;
    }

    /**
     * Sends one of the one-sided control frames ({@link FrameType#REGION_EXPOSE},
     * {@link FrameType#REGION_REVOKE}, {@link FrameType#EPOCH_SYNC}, {@link FrameType#EPOCH_ACK}) that
     * {@code encoder} writes into a send slot; no credit. RC orders it after every WRITE posted before it
     * on this channel, which the epoch's synchronization message relies on (seed 002 &sect;3.2). The peer's
     * channel hands it to {@link ChannelEvents#onOneSidedControl}.
     *
     * @return false if it cannot go now (no send buffer: call again later) or this kind carries none
     */
    default boolean sendOneSidedControl(FrameType type, io.rdmaflux.core.frame.ControlFrameEncoder encoder) {
        return false;
    }

    // ---------------------------------------------------------------- control frames (no credit)

    /** Answers an RTS: the peer may write message {@code psn} to {@code [remoteAddress, +messageLength)}. */
    boolean sendCts(int psn, int messageLength, long remoteAddress, int rkey, int flags);

    /**
     * Answers an RTS on a connection whose rails span several devices: the peer writes rail {@code r}'s stripe
     * with {@code railRkeys[r]} (the message buffer is registered once per device). The default sends one
     * rkey when every rail's is the same and otherwise throws: a channel kind that carries CTS frames of the
     * RC channel overrides it.
     *
     * @throws UnsupportedOperationException if the rkeys differ and this channel kind cannot carry them
     */
    default boolean sendCts(int psn, int messageLength, long remoteAddress, int[] railRkeys, int flags) {
        for (int k : railRkeys) {
            if (k != railRkeys[0]) {
                throw new UnsupportedOperationException("channel kind " + kind() + " cannot send a CTS with one rkey per rail;"
                    + " use rails of one device, or RC_SEND_RECV or EAGER_RDMA channels, for rails over several devices");
            }
        }
        return sendCts(psn, messageLength, remoteAddress, railRkeys[0], flags);
    }

    /** Tells the peer that rail {@code failedRail} failed here. */
    boolean sendRailDown(int failedRail);

    /** Tells the peer this side's inbound side closed after the subscriber got every PSN before {@code firstUndeliveredPsn}. */
    boolean sendInboundClosed(int firstUndeliveredPsn);

    /** Sends a CREDIT frame now if this channel can. @return whether one was sent */
    boolean sendCreditFrame();

    /** Grants the buffer credits its free buffers allow and sends a CREDIT frame if due. @return 1 if one was sent */
    int flushCredits();

    /** A graceful CLOSE (or with {@code last}, this rail's FINAL); false while no send slot is free. */
    boolean sendGracefulClose(int nextPsn, int railMask, boolean last);

    /** An abort CLOSE, best effort; nothing is sent on this rail after it. */
    void sendAbort(int nextPsn, String reason);

    // ---------------------------------------------------------------- receive buffers

    /** Gives a DATA receive buffer back, exactly once per {@code onData}/{@code onPackedData}. */
    void releaseReceiveBuffer(int slot);

    /** DATA receive buffers of this channel (the slots {@code onData} names run from 0 to this, exclusive). */
    int receiveSlots();

    /** Free DATA receive buffers: capacity minus buffers the application holds; 0 once failed. */
    int freeReceiveBuffers();

    /** DATA receive buffers the application holds. */
    int receiveBuffersHeld();

    // ---------------------------------------------------------------- state

    /** Whether control frames can still go (established, not failed, last frame not sent). */
    boolean carriesControl();

    /** Whether the channel failed (it reported {@link ChannelEvents#onFailure}). */
    boolean isFailed();

    /** Whether the channel's resources were destroyed ({@link #close()}). */
    boolean isClosed();

    /** Whether this rail's CLOSE went. */
    boolean closeSent();

    /** Whether this rail's last frame went. */
    boolean finalSent();

    /** Send slots in use (frames posted or held back and not completed). */
    int sendBuffersInUse();

    /**
     * Whether nothing of this channel is still in flight, so that closing it now loses nothing its peer waits for:
     * by default no send slot in use. A channel whose transport owes its peer more (an acknowledgement a reliable
     * datagram layer has not sent yet) says false until that went. After the connection ended, its rails are closed
     * once every channel is settled or failed (the connection keeps running their duty cycles until then).
     */
    default boolean settled() {
        return sendBuffersInUse() == 0;
    }

    /** Send slots of this channel. */
    int sendBufferCount();

    /** DATA receive buffers of the peer on this rail (the most buffer credits this side can hold). */
    int peerReceiveBuffers();

    /** Frames of {@code type} posted / received on this channel. */
    long framesSent(FrameType type);

    /** Frames of {@code type} received on this channel. */
    long framesReceived(FrameType type);

    /** Packed DATA frames posted. */
    long packedFramesSent();

    /** What {@link #forEachUnackedSend} hands over: one credit-taking frame without a completion. */
    @FunctionalInterface
    interface UnackedSend {
        /** {@code token} as posted; the frame is at {@code frameOffset} of {@code memory}. */
        void frame(long token, DirectBuffer memory, int frameOffset);
    }

    /** After a failure: every credit-taking frame without a completion, for the connection to send again. */
    void forEachUnackedSend(UnackedSend visitor);

    /** The peer reported this rail failed on its side: fail it here too. */
    void failedByPeer();

    /** Moves the queue pair to ERROR; outstanding work completes flushed. */
    void abort();

    /**
     * The peer does not offer this kind and agreed to {@link ChannelKind#fallback()} instead: a kind built
     * over a channel of the fallback kind (whose queue pair endpoint went in the handshake) frees its own
     * resources and hands that channel over, not yet connected. Called at most once, before {@link #connect}.
     *
     * @throws UnsupportedOperationException if this kind has no fallback channel
     */
    default Channel downgrade() {
        throw new UnsupportedOperationException(kind() + " has no fallback channel to downgrade to");
    }

    /** Destroys the channel's resources; idempotent. */
    @Override
    void close();
}
