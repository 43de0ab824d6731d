package io.rdmaflux.core;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.QpTimeouts;
import io.rdmaflux.core.engine.IdleWait;
import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.core.frame.FrameHeader;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.jspecify.annotations.Nullable;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What an {@link RdmaNode.Builder} hands its node at {@link RdmaNode.Builder#build()}: the sizes checked
 * against each other (each setter checked its own range), and every default that depends on other settings or
 * on the provider resolved: the node's name, its rails, the credit and rendezvous thresholds, the QP timeouts,
 * the channel providers offered, whether the node drives its provider and the idle strategy it runs with. The
 * node reads these for as long as it lives; changing or reusing the builder afterwards does not touch them.
 *
 * <p><b>Concurrency:</b> immutable; read from any thread.
 */
final class NodeSettings {
    private static final AtomicLong IDS = new AtomicLong();

    final RdmaProvider provider;
    final String name;
    /** The rails in rail order, from {@link RdmaNode.Builder#rails} or the device and its ports. */
    final List<RailSpec> railSpecs;
    final int bufferBytes;
    final int receiveBuffers;
    final int controlBuffers;
    final int sendBuffers;
    final int sendQueue;
    /** As configured; 0: the default, {@link RdmaNode#DEFAULT_MESSAGE_CREDITS_PER_BUFFER}. */
    private final int messageCreditsPerBuffer;
    final int creditThreshold;
    final int maxMessageBytes;
    final int rendezvousBuffers;
    final int rendezvousThresholdBytes;
    final long registrationCacheBytes;
    final ThreadingMode threadingMode;
    final NanoClock clock;
    /** This node's own idle strategy (see {@link #idleStrategy(RdmaProvider, IdleStrategy, boolean)}). */
    final IdleStrategy idleStrategy;
    /** Whether the node calls {@code provider.progress} in its duty cycle. */
    final boolean driveProvider;
    final ChannelFactory acceptChannelFactory;
    final QpTimeouts qpTimeouts;
    /** The channel providers offered: the explicit ones, then those discovered of other kinds. */
    final Map<ChannelKind, ChannelProvider> channelProviders;
    final EagerSpec eager;
    final int eagerPollingSet;
    /** Receive buffers per rail of the shared receive queue; 0: per-connection pools. */
    final int sharedReceiveBuffers;
    final int sharedSendBuffers;
    final int sharedCreditWindow;
    /** Queue pairs each device's shared CQ serves; 0: one CQ per channel. */
    final int sharedCqQueuePairs;

    /**
     * @throws IllegalArgumentException if sizes do not fit together, or the rails are given twice over
     * @throws NullPointerException if no provider was given
     * @throws io.rdmaflux.verbs.VerbsException if the device does not exist
     */
    NodeSettings(RdmaNode.Builder b) {
        if (b.bufferBytes <= FrameHeader.LENGTH) {
            throw new IllegalArgumentException("bufferBytes must exceed the " + FrameHeader.LENGTH + "-byte frame header");
        }
        if (b.creditThreshold > b.receiveBuffers) {
            // the peer never holds more than receiveBuffers credits: a higher threshold would never be reached
            throw new IllegalArgumentException("creditThreshold in [1, receiveBuffers=" + b.receiveBuffers + "] required but it was "
                + b.creditThreshold + "; lower creditThreshold or raise receiveBuffers to at least " + b.creditThreshold);
        }
        if (b.sharedReceiveBuffers > 0 && b.sharedReceiveBuffers <= Math.max(b.controlBuffers, b.sharedReceiveBuffers / 16)) {
            throw new IllegalArgumentException("sharedReceiveQueue buffers > controlBuffers=" + b.controlBuffers
                + " (the control reserve) required but it was " + b.sharedReceiveBuffers + "; raise sharedReceiveQueue(..) to e.g. 4096");
        }
        if (b.rendezvousBuffers > 0 && (long) b.rendezvousBuffers * Math.max(1, b.maxMessageBytes) > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("rendezvousBuffers x maxMessageBytes = " + b.rendezvousBuffers + " x " + b.maxMessageBytes
                + " exceeds 2 GiB of registered memory per pool; lower either, or use rendezvousBuffers(0) to fragment large messages");
        }
        this.provider = Objects.requireNonNull(b.provider, "provider: call RdmaNode.builder().provider(..)");
        this.name = b.name != null ? b.name : "node" + IDS.incrementAndGet();
        this.railSpecs = NodeRails.specs(provider, b.railSpecs, b.device, b.ports, b.portsGiven);
        this.bufferBytes = b.bufferBytes;
        this.receiveBuffers = b.receiveBuffers;
        this.controlBuffers = b.controlBuffers;
        this.sendBuffers = b.sendBuffers;
        this.sendQueue = b.sendQueue;
        this.messageCreditsPerBuffer = b.messageCreditsPerBuffer;
        this.creditThreshold = b.creditThreshold > 0 ? b.creditThreshold : Math.max(1, receiveBuffers / 4);
        this.maxMessageBytes = b.maxMessageBytes;
        this.rendezvousBuffers = b.rendezvousBuffers;
        this.rendezvousThresholdBytes = b.rendezvousThresholdBytes >= 0 ? b.rendezvousThresholdBytes : bufferBytes - FrameHeader.LENGTH;
        this.registrationCacheBytes = b.registrationCacheBytes;
        this.threadingMode = b.threadingMode;
        this.clock = b.clock;
        this.driveProvider = b.driveProvider != null ? b.driveProvider : provider.threadingMode() == ThreadingMode.INVOKER;
        this.idleStrategy = idleStrategy(provider, b.idleStrategy, driveProvider);
        this.acceptChannelFactory = b.acceptChannelFactory;
        this.qpTimeouts = new QpTimeouts(b.qpRetryTimeoutNs, b.qpRetryCount, b.qpRnrTimeoutNs, b.qpRnrRetryCount);
        this.channelProviders = offered(b.channelProviders, b.discoverChannelProviders);
        this.eager = b.eager;
        this.eagerPollingSet = b.eagerPollingSet;
        this.sharedReceiveBuffers = b.sharedReceiveBuffers;
        this.sharedSendBuffers = b.sharedSendBuffers;
        this.sharedCreditWindow = b.sharedCreditWindow;
        this.sharedCqQueuePairs = b.sharedCqQueuePairs;
    }

    /**
     * The node's own idle strategy: a fresh {@link ProgressIdleStrategy} (default
     * {@link ProgressIdleStrategy#backoff()}) that, when the node drives an INVOKER-mode provider,
     * blocks in the provider's I/O wait, so a frame arriving on a socket of the IP fabric, or pushed
     * by another NIC of the in-JVM fabric, wakes the node at once; any other strategy as given.
     */
    private static IdleStrategy idleStrategy(RdmaProvider provider, @Nullable IdleStrategy configured, boolean drive) {
        IdleStrategy s = configured != null ? configured : ProgressIdleStrategy.backoff();
        if (s instanceof ProgressIdleStrategy p) {
            boolean canWait = drive && provider.threadingMode() == ThreadingMode.INVOKER;
            return p.withWait(canWait ? IdleWait.of(provider) : null);
        }
        return s;
    }

    /** The providers offered: the explicit ones, then those discovered of other kinds. */
    private static Map<ChannelKind, ChannelProvider> offered(Map<ChannelKind, ChannelProvider> explicit, boolean discover) {
        Map<ChannelKind, ChannelProvider> offered = new EnumMap<>(explicit);
        if (discover) {
            for (ChannelProvider p : ServiceLoader.load(ChannelProvider.class, RdmaNode.class.getClassLoader())) {
                offered.putIfAbsent(p.kind(), p);
            }
        }
        return Map.copyOf(offered);
    }

    /** What {@link ConnectionEstablishment} sizes a connection's channels with. */
    ConnectionEstablishment.Settings establishment() {
        return new ConnectionEstablishment.Settings(bufferBytes, receiveBuffers, controlBuffers, sendBuffers, creditThreshold,
            qpTimeouts, rendezvousBuffers, maxMessageBytes, eager, eagerPollingSet);
    }

    /** {@link RdmaNode#messageCreditsPerBuffer()}: the configured value, else the default. */
    int messageCreditsPerBuffer() {
        return messageCreditsPerBuffer > 0 ? messageCreditsPerBuffer : RdmaNode.DEFAULT_MESSAGE_CREDITS_PER_BUFFER;
    }

    /**
     * The reorder window of a connection over {@code rails} rails, PSNs ahead of the ESN: messages holding receive
     * buffers or credits (up to {@link #messageCreditsPerBuffer()} per buffer), one partial message per rail, and
     * completed rendezvous messages holding message buffers.
     */
    int reorderWindow(int rails) {
        return rails * (messageCreditsPerBuffer() * receiveBuffers + 1) + rendezvousBuffers + 1;
    }
}
