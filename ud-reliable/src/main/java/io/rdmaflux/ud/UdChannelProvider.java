package io.rdmaflux.ud;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelSetup;
import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.core.internal.srq.RailSharedBuffers;
import io.rdmaflux.core.internal.srq.SharedPoolChannelProvider;
import io.rdmaflux.verbs.SharedReceiveQueue;
import org.jspecify.annotations.Nullable;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.VerbsException;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * Opens {@link UdChannel}s ({@link ChannelKind#RELIABLE_UD}, seed 003 &sect;4). Per node (protection domain) and
 * port it keeps one {@link UdPort} &mdash; one UD receive queue pair with a static pool shared by all peers, K send
 * queue pairs, address handles per peer &mdash; made by the first channel on that rail and destroyed with the last.
 * On a node with a shared receive queue ({@code RdmaNode.Builder.sharedReceiveQueue(..)}) a channel registers no
 * buffers of its own: its RC channel takes receive buffers from the node's reliable UD pool of the rail and send
 * buffers from the rail's shared send region ({@link #open(ChannelSetup, RailSharedBuffers)}).
 * Registered for {@link java.util.ServiceLoader}: a node with this module on its class path offers the kind, and a
 * connection asks for it with {@code ConnectionSpec.channelKind(ChannelKind.RELIABLE_UD)} (per connection or per rail).
 *
 * <pre>{@code
 * RdmaNode node = RdmaNode.builder().provider(p).channelProvider(new UdChannelProvider(UdSpec.DEFAULTS)).build();
 * node.connect(address, ConnectionSpec.rails(2).channelKind(ChannelKind.RELIABLE_UD));
 * }</pre>
 *
 * <p><b>Errors:</b> a provider without UD queue pairs (DiSNI, UCX) fails {@link #open} with a {@link VerbsException}
 * from the device, naming it. <b>Concurrency:</b> thread-safe.
 */
public final class UdChannelProvider implements SharedPoolChannelProvider {
    private record RailKey(ProtectionDomain pd, int port) {
    }

    private static final Map<RailKey, UdPort> RAILS = new HashMap<>();
    /** Per node: the windows its CTSs granted (weak: a closed node's domain goes with its grants). */
    private static final Map<ProtectionDomain, WriteGrants> GRANTS = new WeakHashMap<>();
    private final UdSpec spec;
    private final List<UdChannel> open = new CopyOnWriteArrayList<>();

    /** With {@link UdSpec#DEFAULTS} (what {@link java.util.ServiceLoader} uses). */
    public UdChannelProvider() {
        this(UdSpec.DEFAULTS);
    }

    public UdChannelProvider(UdSpec spec) {
        this.spec = Objects.requireNonNull(spec, "spec");
    }

    @Override
    public ChannelKind kind() {
        return ChannelKind.RELIABLE_UD;
    }

    /** @throws VerbsException if the device refuses a resource (nothing is left allocated) */
    @Override
    public Channel open(ChannelSetup s) {
        return openOver(s, null);
    }

    /**
     * The node's shared pool of its reliable UD channels on one rail ({@code RdmaNode.Builder.sharedReceiveQueue(..)}):
     * its receives are taken by the channels' datagram queue pairs ({@link DatagramSharedReceiveQueue}), not by the device.
     */
    @Override
    public SharedReceiveQueue createSharedReceiveQueue(ProtectionDomain pd, int maxWorkRequests) {
        return new DatagramSharedReceiveQueue(maxWorkRequests);
    }

    /**
     * A channel that registers no buffers of its own: its RC channel runs in SRQ mode, its receives from the node's
     * reliable UD pool of the rail (credits lent by the pool's {@code SrqCreditBudget}, equal shares among the active
     * connections), its send buffers from the rail's shared send region.
     *
     * @throws VerbsException if the device refuses a resource (nothing is left allocated)
     */
    @Override
    public Channel open(ChannelSetup s, RailSharedBuffers shared) {
        return openOver(s, Objects.requireNonNull(shared, "shared"));
    }

    private Channel openOver(ChannelSetup s, @Nullable RailSharedBuffers shared) {
        UdPort rail;
        WriteGrants grants;
        synchronized (RAILS) {
            rail = RAILS.get(new RailKey(s.pd(), s.port().number()));
            if (rail == null) {
                rail = new UdPort(s.pd(), s.port(), spec);
                RAILS.put(new RailKey(s.pd(), s.port().number()), rail);
            }
            grants = grantsOf(s.pd());
        }
        UdProtectionDomain pd = new UdProtectionDomain(s.pd(), rail, grants, spec.dr());
        RcSubchannel rc;
        try {
            rc = new RcSubchannel(s.rail(), pd, s.port(), s.bufferBytes(), s.receiveBuffers(), s.controlBuffers(), s.sendBuffers(),
                s.creditThreshold(), s.timeouts(), s.maxWrites(), shared);
        } catch (RuntimeException e) {
            ReliableDatagramQp made = pd.created();
            if (made != null) {
                made.close(); // idempotent; the RC channel closed it already if it got that far
            }
            synchronized (RAILS) {
                if (rail.idle()) {
                    closeRail(rail);
                }
            }
            throw e;
        }
        ReliableDatagramQp qp = Objects.requireNonNull(pd.created(), "the RC channel made no queue pair");
        UdChannel ch = new UdChannel(rc, qp, rail, grants, shared, open::remove);
        open.add(ch);
        return ch;
    }

    /** The windows the CTSs of the node owning {@code pd} granted (one per node: a WRITE may land in any of them). */
    static WriteGrants grantsOf(ProtectionDomain pd) {
        synchronized (RAILS) {
            return GRANTS.computeIfAbsent(pd, d -> new WriteGrants());
        }
    }

    /** The last queue pair of {@code rail} closed: destroys it. */
    static void closeRail(UdPort rail) {
        synchronized (RAILS) {
            RAILS.values().remove(rail);
            rail.close();
        }
    }

    /** The channels this provider opened that are not closed yet (for metrics and tests: DR counters per peer). */
    public List<UdChannel> openChannels() {
        return List.copyOf(open);
    }

    @Override
    public String toString() {
        return "ChannelProvider{" + kind() + ", " + spec + "}";
    }
}
