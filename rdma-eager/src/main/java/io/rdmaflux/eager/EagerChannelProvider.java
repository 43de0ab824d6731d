package io.rdmaflux.eager;

import io.rdmaflux.core.EagerSpec;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.ChannelSetup;
import io.rdmaflux.verbs.ProtectionDomain;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Opens {@link EagerChannel}s ({@link ChannelKind#EAGER_RDMA}, seed 001 &sect;4.1&ndash;4.6): per rail an RC
 * send/receive channel from {@link ChannelProvider#rcSendRecv()}, a receive ring of
 * {@code EagerSpec.slots()} slots registered for remote writes, and a staging ring as large, both
 * registered once for the channel's life.
 *
 * <p>Registered for {@link java.util.ServiceLoader}, so a node built with this module on the class path
 * offers the eager kind and its connections use it by default ({@code RdmaNode.Builder.eager(..)},
 * {@code ConnectionSpec.eager(..)} turn it off or size it). Explicitly:
 * <pre>{@code
 * RdmaNode node = RdmaNode.builder().provider(p).channelProvider(new EagerChannelProvider())
 *     .eager(EagerSpec.slots(32)).eagerPollingSet(16).build();
 * }</pre>
 *
 * <p><b>Polling set:</b> one {@link PollingSet} per node (per protection domain, which a node owns
 * alone), of the size {@code RdmaNode.Builder.eagerPollingSet(n)} gives, managed by the receivers as
 * {@link EagerPolicy} says. <b>Tail ordering:</b> a ring whose port does not place an RDMA WRITE's last
 * word last ({@code Port.orderedWritePlacement()}) asks its senders for a CRC32C per slot.
 *
 * <p><b>Concurrency:</b> thread-safe; {@link #open} may run on several threads at once.
 */
public final class EagerChannelProvider implements ChannelProvider {
    private final EagerPolicy policy;
    private final Map<ProtectionDomain, PollingSet> pollingSets = Collections.synchronizedMap(new WeakHashMap<>());
    private final List<EagerChannel> open = new CopyOnWriteArrayList<>();

    /** With {@link EagerPolicy#DEFAULTS} (what {@link java.util.ServiceLoader} uses). */
    public EagerChannelProvider() {
        this(EagerPolicy.DEFAULTS);
    }

    public EagerChannelProvider(EagerPolicy policy) {
        this.policy = java.util.Objects.requireNonNull(policy, "policy");
    }

    @Override
    public ChannelKind kind() {
        return ChannelKind.EAGER_RDMA;
    }

    /**
     * @throws io.rdmaflux.verbs.VerbsException if the device refuses a resource (nothing is left allocated)
     */
    @Override
    public Channel open(ChannelSetup s) {
        EagerSpec spec = s.eager();
        int frameBytes = spec.slotBytes() == 0 ? s.bufferBytes() : Math.max(64, spec.slotBytes());
        int slots = spec.slots();
        Channel rc = ChannelProvider.rcSendRecv().open(new ChannelSetup(s.rail(), s.pd(), s.port(), s.bufferBytes(), s.receiveBuffers(),
            s.controlBuffers() + 2, s.sendBuffers(), s.creditThreshold(), s.timeouts(), s.maxWrites() + slots, spec, s.eagerPollingSet()));
        RingReceiver ring = null;
        RingSender sender = null;
        try {
            ring = new RingReceiver(s.pd(), slots, RingLayout.slotBytesFor(frameBytes), !s.port().orderedWritePlacement());
            sender = new RingSender(s.pd(), slots, RingLayout.slotBytesFor(s.bufferBytes()));
            PollingSet set = spec.enabled() ? pollingSets.computeIfAbsent(s.pd(), pd -> new PollingSet(s.eagerPollingSet())) : new PollingSet(0);
            EagerChannel ch = new EagerChannel(rc, this, ring, sender, set, policy, s.receiveBuffers());
            open.add(ch);
            return ch;
        } catch (RuntimeException e) {
            if (sender != null) {
                sender.close();
            }
            if (ring != null) {
                ring.close();
            }
            rc.close();
            throw e;
        }
    }

    void unregister(EagerChannel ch) {
        open.remove(ch);
    }

    /** The channels this provider opened and that are not closed, in opening order; any thread. */
    public List<EagerChannel> channels() {
        return new ArrayList<>(open);
    }

    @Override
    public String toString() {
        return "ChannelProvider{" + kind() + ", " + policy + "}";
    }
}
