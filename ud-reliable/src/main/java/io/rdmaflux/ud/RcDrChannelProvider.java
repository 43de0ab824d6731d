package io.rdmaflux.ud;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.ChannelKind;
import io.rdmaflux.core.channel.ChannelProvider;
import io.rdmaflux.core.channel.ChannelSetup;
import io.rdmaflux.core.internal.rc.RcSubchannel;
import io.rdmaflux.verbs.VerbsException;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Opens {@link ChannelKind#RC_DR} channels: the RC send/receive channel's frames as DR messages (CRC32C over header
 * and payload, PSN/SACK acknowledgement, selective retransmission, seed 003 &sect;4.2) on an RC queue pair of each
 * connection rail's own ({@link RcDatagramRail}). DR's reason for checking end to end (&sect;3.1): the RC transport's
 * checks end at the NIC, so data damaged in host memory, on the bus or by the NIC itself is delivered as if intact;
 * here it is dropped, counted ({@link UdChannel#drStats()}, {@code corruptedDropped}) and sent again.
 *
 * <p>The cost, against plain {@link ChannelKind#RC_SEND_RECV}: every frame is copied into a DR datagram and its
 * CRC32C computed on both sides, DR's ACKs travel as extra SENDs (one per {@code ackEveryVfrags}), a send completes
 * only once DR acknowledged it, and each rail registers {@code (receiveSlots + sendSlots)} datagram slots (measured:
 * ud-reliable/README.md, "DR over RC"). Large messages take the WRITE rendezvous carried as datagrams into a window
 * the receiver granted; no RDMA READ, no atomics, no one-sided work on such rails.
 *
 * <p>Registered for {@link java.util.ServiceLoader}; a connection asks for it with
 * {@code ConnectionSpec.channelKind(ChannelKind.RC_DR)} (per connection or per rail). Each side's datagram follows
 * its {@code bufferBytes}; each sends datagrams no larger than the peer's slots.
 *
 * <p><b>Errors:</b> a device that refuses a resource fails {@link #open} with its {@link VerbsException}, nothing left
 * allocated. <b>Concurrency:</b> thread-safe.
 */
public final class RcDrChannelProvider implements ChannelProvider {
    private final RcDrSpec spec;
    private final List<UdChannel> open = new CopyOnWriteArrayList<>();

    /** With {@link RcDrSpec#DEFAULTS} (what {@link java.util.ServiceLoader} uses). */
    public RcDrChannelProvider() {
        this(RcDrSpec.DEFAULTS);
    }

    public RcDrChannelProvider(RcDrSpec spec) {
        this.spec = Objects.requireNonNull(spec, "spec");
    }

    @Override
    public ChannelKind kind() {
        return ChannelKind.RC_DR;
    }

    /** @throws VerbsException if the device refuses a resource (nothing is left allocated) */
    @Override
    public Channel open(ChannelSetup s) {
        WriteGrants grants = UdChannelProvider.grantsOf(s.pd());
        int datagram = spec.datagramBytes(s.bufferBytes());
        UdProtectionDomain pd = new UdProtectionDomain(s.pd(),
            a -> new RcDatagramRail(s.pd(), a, spec.receiveSlots(), spec.sendSlots(), datagram), true, grants, spec.dr());
        RcSubchannel rc;
        try {
            rc = new RcSubchannel(s.rail(), pd, s.port(), s.bufferBytes(), s.receiveBuffers(), s.controlBuffers(), s.sendBuffers(),
                s.creditThreshold(), s.timeouts(), s.maxWrites(), null);
        } catch (RuntimeException e) {
            ReliableDatagramQp made = pd.created();
            if (made != null) {
                made.close(); // idempotent; releases its RC queue pair and slots
            }
            throw e;
        }
        ReliableDatagramQp qp = Objects.requireNonNull(pd.created(), "the RC channel made no queue pair");
        UdChannel ch = new UdChannel(ChannelKind.RC_DR, rc, qp, qp.rail(), grants, null, open::remove);
        open.add(ch);
        return ch;
    }

    /** The channels this provider opened that are not closed yet (for metrics and tests: DR counters per rail). */
    public List<UdChannel> openChannels() {
        return List.copyOf(open);
    }

    @Override
    public String toString() {
        return "ChannelProvider{" + kind() + ", " + spec + "}";
    }
}
