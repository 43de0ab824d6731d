package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.ConnectionClosedException;
import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.core.frame.EpochAckFrameCodec;
import io.rdmaflux.core.frame.EpochSyncFrameCodec;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.frame.RegionRevokeFrameCodec;
import io.rdmaflux.core.onesided.Epoch;
import io.rdmaflux.core.onesided.OneSided;
import io.rdmaflux.core.onesided.RemoteAccess;
import io.rdmaflux.core.onesided.RemoteRegion;
import io.rdmaflux.core.onesided.Transfer;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import org.agrona.DirectBuffer;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * A connection's one-sided engine (seed 002 &sect;3): the {@link OneSided} operations of
 * {@code RdmaConnection}, run as a stage of the connection's duty cycle on its progress thread. It
 * drives the owner's {@link Exposures}, the user's {@link PeerRegions}, the put and get
 * {@link TransferQueue}s (taking turns at posting first, &sect;4.3), the {@link FragmentTable} of posted
 * RDMA, the origin's {@link AccessEpochs} and the target's {@link ExposureEpochs}, and the
 * {@link ControlFrames} they send. It reuses the channels' RDMA path of the rendezvous: bare RDMA WRITEs
 * ({@code Channel.postWrite}, completions by tag) and READs ({@code Channel.readStripe}, completions by
 * a {@link WorkRequestTokens#oneSided} token), and its {@link AtomicOps} post verbs atomics
 * ({@code Channel.postAtomic}, completions by a {@link WorkRequestTokens#oneSidedAtomic} token), on the rails whose channel
 * {@linkplain Channel#carriesOneSided() carries one-sided work}.
 *
 * <p><b>Concurrency:</b> the {@link OneSided} methods on any thread (they hand work over through a
 * lock-free queue and wake the progress thread); {@link #doWork}, the events and {@link #terminate} on
 * the progress thread.
 */
public final class OneSidedEngine implements OneSided {
    /** Transfers of at least this many bytes are split over the rails (seed 002 &sect;3.2's switchover threshold). */
    public static final long DEFAULT_SWITCHOVER_BYTES = 16 * 1024;
    /** Fragment sizes are multiples of this, bytes. */
    public static final long GRANULE_BYTES = 64;

    private final String name;
    private final Channel[] channels;
    private final ProtectionDomain pd;
    private final Runnable wake;
    private final Consumer<String> protocolFailure;
    private final ConcurrentLinkedQueue<Command> inputs = new ConcurrentLinkedQueue<>();
    private final ControlFrames control;
    private final FragmentTable fragments;
    private final TransferQueue puts;
    private final TransferQueue gets;
    private final Exposures exposures;
    private final PeerRegions peerRegions;
    private final AccessEpochs accessEpochs;
    private final ExposureEpochs exposureEpochs;
    private final AtomicOps atomics;
    private volatile @Nullable Throwable closed;
    private boolean putsFirst = true;
    private long repostedFragments;

    /**
     * @param wake            wakes the progress thread after work was handed in
     * @param protocolFailure aborts the connection for a peer that broke the one-sided protocol
     */
    public OneSidedEngine(String name, Channel[] channels, ProtectionDomain pd, Runnable wake, Consumer<String> protocolFailure) {
        this(name, channels, pd, wake, protocolFailure, DEFAULT_SWITCHOVER_BYTES);
    }

    /** @param switchoverBytes transfers of at least this many bytes are split over the rails, &gt;= 1 */
    public OneSidedEngine(String name, Channel[] channels, ProtectionDomain pd, Runnable wake, Consumer<String> protocolFailure,
                          long switchoverBytes) {
        this.name = name;
        this.channels = channels;
        this.pd = pd;
        this.wake = wake;
        this.protocolFailure = protocolFailure;
        this.control = new ControlFrames(channels);
        this.fragments = new FragmentTable(channels.length);
        this.puts = new TransferQueue(true, channels, fragments, switchoverBytes, GRANULE_BYTES);
        this.gets = new TransferQueue(false, channels, fragments, switchoverBytes, GRANULE_BYTES);
        this.exposures = new Exposures(this, pd, control, channels.length);
        this.peerRegions = new PeerRegions(this, control, channels.length);
        this.accessEpochs = new AccessEpochs(control);
        this.exposureEpochs = new ExposureEpochs(control);
        this.atomics = new AtomicOps(this, channels, pd);
    }

    // ---------------------------------------------------------------- OneSided (any thread)

    @Override
    public Mono<RemoteRegion> expose(MemoryRegion region, long offset, long lengthBytes, RemoteAccess access) {
        return exposures.expose(region, offset, lengthBytes, access);
    }

    @Override
    public Flux<RemoteRegion> remoteRegions() {
        return peerRegions.remoteRegions();
    }

    @Override
    public Mono<Void> put(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return operation(true, local, localOffset, remote, remoteOffset, lengthBytes);
    }

    @Override
    public Mono<Void> get(MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return operation(false, local, localOffset, remote, remoteOffset, lengthBytes);
    }

    @Override
    public Flux<Transfer> transfers(Publisher<Transfer> transfers, long maxOutstandingBytes) {
        if (maxOutstandingBytes <= 0) {
            throw new IllegalArgumentException("maxOutstandingBytes > 0 required but it was " + maxOutstandingBytes);
        }
        return new FluxTransfers(this, Flux.from(transfers), maxOutstandingBytes);
    }

    @Override
    public Mono<Long> fetchAndAdd(RemoteRegion remote, long offsetBytes, long delta) {
        return atomic(OneSidedOp.FETCH_ADD, remote, offsetBytes, delta, 0);
    }

    @Override
    public Mono<Long> compareAndSwap(RemoteRegion remote, long offsetBytes, long expect, long update) {
        return atomic(OneSidedOp.CMP_SWAP, remote, offsetBytes, expect, update);
    }

    private Mono<Long> atomic(int kind, RemoteRegion remote, long offsetBytes, long compareAdd, long swap) {
        return Mono.create(sink -> {
            String name = kind == OneSidedOp.FETCH_ADD ? "fetchAndAdd" : "compareAndSwap";
            RuntimeException refused = OneSidedChecks.checkAtomic(this, pd, name, remote, offsetBytes);
            if (refused != null) {
                sink.error(refused);
                return;
            }
            OneSidedOp[] op = new OneSidedOp[1];
            op[0] = new OneSidedOp(kind, (PeerRegion) remote, offsetBytes, compareAdd, swap, error -> {
                if (error == null) {
                    sink.success(op[0].result);
                } else {
                    sink.error(error);
                }
            });
            submit(new Command() {
                @Override
                public void run() {
                    accessEpochs.opStarted(op[0]);
                    op[0].remote.opStarted();
                    atomics.add(op[0]);
                }

                @Override
                public void fail(Throwable error) {
                    sink.error(error);
                }
            });
        });
    }

    /** One transfer of the streaming form, as a Mono. */
    Mono<Void> transfer(Transfer t) {
        return operation(t.put(), t.local(), t.localOffset(), t.remote(), t.remoteOffset(), t.lengthBytes());
    }

    private Mono<Void> operation(boolean put, MemoryRegion local, long localOffset, RemoteRegion remote, long remoteOffset, int lengthBytes) {
        return Mono.create(sink -> {
            RuntimeException refused = OneSidedChecks.check(this, pd, put, local, localOffset, remote, remoteOffset, lengthBytes);
            if (refused != null) {
                sink.error(refused);
                return;
            }
            OneSidedOp op = new OneSidedOp(put, local, localOffset, (PeerRegion) remote, remoteOffset, lengthBytes, error -> {
                if (error == null) {
                    sink.success();
                } else {
                    sink.error(error);
                }
            });
            submit(new Command() {
                @Override
                public void run() {
                    start(op);
                }

                @Override
                public void fail(Throwable error) {
                    sink.error(error);
                }
            });
        });
    }

    /** Progress thread: {@code op} (checked) joins the current access epoch and its direction's queue. */
    void start(OneSidedOp op) {
        accessEpochs.opStarted(op);
        op.remote.opStarted();
        (op.put ? puts : gets).add(op);
    }

    @Override
    public Mono<Epoch> fence() {
        return Mono.create(sink -> submit(new Command() {
            @Override
            public void run() {
                accessEpochs.fence(sink);
            }

            @Override
            public void fail(Throwable error) {
                sink.error(error);
            }
        }));
    }

    @Override
    public Flux<Epoch> epochs() {
        return exposureEpochs.epochs();
    }

    /** Hands {@code c} to the progress thread, or fails it at once if the engine is closed. */
    void submit(Command c) {
        Throwable error = closed;
        if (error != null) {
            c.fail(error);
            return;
        }
        inputs.offer(c);
        error = closed;
        if (error != null && inputs.remove(c)) {
            // terminate() drained the queue before this command arrived
            c.fail(error);
            return;
        }
        wake.run();
    }

    // ---------------------------------------------------------------- the duty cycle (progress thread)

    /** One duty cycle: inputs, failed rails, the put and get queues (alternating), epochs, control frames. @return work done */
    public int doWork(long nowNs) {
        if (closed != null) {
            return 0;
        }
        int work = 0;
        Command c;
        while ((c = inputs.poll()) != null) {
            c.run();
            work++;
        }
        long alive = 0;
        for (int r = 0; r < channels.length; r++) {
            Channel ch = channels[r];
            if (ch.carriesOneSided() && !ch.isFailed()) {
                alive |= 1L << r;
            } else if (ch.isFailed()) {
                if (fragments.postedOn(r) > 0) {
                    // their completions will never be reported: post them again on the survivors
                    fragments.removeRail(r, f -> {
                        repostedFragments++;
                        (f.op.put ? puts : gets).repost(f);
                    });
                    work++;
                }
                if (atomics.postedOn(r) > 0) {
                    atomics.railFailed(r, "rail " + r + " of " + name);
                    work++;
                }
            }
        }
        work += interleave(alive);
        work += atomics.post(alive);
        work += accessEpochs.progress(alive);
        work += control.flush();
        return work;
    }

    /**
     * Posts fragments of the put and the get queue in turn, one at a time, while either can post (seed 002
     * &sect;4.3: reordering puts and gets so both link directions carry data); the queue that went second
     * in the last turn that posted goes first next time, so neither wins every freed RDMA slot.
     */
    private int interleave(long alive) {
        int work = 0;
        while (true) {
            TransferQueue first = putsFirst ? puts : gets;
            TransferQueue second = putsFirst ? gets : puts;
            int a = first.post(alive, this, 1, second);
            int b = second.post(alive, this, 1, first);
            if (a + b == 0) {
                return work;
            }
            work += a + b;
            if (a > 0) {
                putsFirst = !putsFirst;
            }
        }
    }

    /** A bare RDMA WRITE of a put's fragment completed. */
    public void onWriteCompleted(Channel ch, int tag) {
        fragmentDone(tag);
    }

    /** An RDMA READ with a {@link WorkRequestTokens#oneSided} token completed. */
    public void onReadCompleted(Channel ch, long token) {
        if (WorkRequestTokens.isOneSidedAtomic(token)) {
            atomics.onCompleted(WorkRequestTokens.oneSidedFragment(token));
            return;
        }
        fragmentDone(WorkRequestTokens.oneSidedFragment(token));
    }

    private void fragmentDone(int slot) {
        Fragment f = fragments.remove(slot);
        if (f == null) {
            return;
        }
        (f.op.put ? puts : gets).retired(f);
        if (--f.op.fragmentsLeft == 0) {
            finish(f.op, null);
        }
    }

    /** A one-sided control frame arrived on {@code ch}, validated, at {@code off} of {@code b}. */
    public void onControl(Channel ch, FrameType type, DirectBuffer b, int off) {
        if (closed != null) {
            return;
        }
        @Nullable String violation = null;
        switch (type) {
            case REGION_EXPOSE -> violation = peerRegions.onExpose(b, off);
            case REGION_REVOKE -> {
                int id = RegionRevokeFrameCodec.regionId(b, off);
                if (RegionRevokeFrameCodec.byOwner(b, off)) {
                    peerRegions.onRevokedByOwner(id);
                } else {
                    exposures.onRelease(id);
                }
            }
            case EPOCH_SYNC -> violation = exposureEpochs.onSync(railOf(ch), EpochSyncFrameCodec.epoch(b, off),
                EpochSyncFrameCodec.railMask(b, off), EpochSyncFrameCodec.generation(b, off), EpochSyncFrameCodec.puts(b, off),
                EpochSyncFrameCodec.bytesPut(b, off));
            case EPOCH_ACK -> accessEpochs.onAck(EpochAckFrameCodec.epoch(b, off));
            default -> violation = type + " is not a one-sided control frame";
        }
        if (violation != null) {
            protocolFailure.accept(violation);
        }
    }

    private int railOf(Channel ch) {
        for (int r = 0; r < channels.length; r++) {
            if (channels[r] == ch) {
                return r;
            }
        }
        throw new IllegalStateException(ch + " is not a channel of " + name);
    }

    /** An operation that cannot go (refused at planning, or no rail is left): it ends with {@code error}. */
    void refuse(OneSidedOp op, Throwable error) {
        finish(op, error);
    }

    void fail(OneSidedOp op, Throwable error) {
        finish(op, error);
    }

    /** An atomic was answered (its result is in {@code op.result}). */
    void complete(OneSidedOp op) {
        finish(op, null);
    }

    private void finish(OneSidedOp op, @Nullable Throwable error) {
        if (!op.end()) {
            return;
        }
        accessEpochs.opEnded(op, error);
        peerRegions.opEnded(op.remote);
        op.completion.completed(error);
    }

    RdmaTransportException noRailError() {
        for (Channel ch : channels) {
            if (ch.carriesOneSided()) {
                return new RdmaTransportException(name + ": every rail that carries one-sided operations failed", null, null);
            }
        }
        return new RdmaTransportException(name + ": none of its " + channels.length + " rails carries one-sided operations (their "
            + "channel kind is " + channels[0].kind() + "; the RC send/receive kind does: open the connection with the eager ring off)",
            null, null);
    }

    /**
     * The connection ended with {@code error}: operations, fences and exposures under way fail with it,
     * every exposed region's registration is deregistered, the peer's regions become invalid, and
     * {@link #remoteRegions()} and {@link #epochs()} complete. Idempotent.
     */
    public void terminate(Throwable error) {
        if (closed != null) {
            return;
        }
        closed = error;
        Command c;
        while ((c = inputs.poll()) != null) {
            c.fail(error);
        }
        fragments.removeAll(f -> finish(f.op, error));
        puts.failAll(this, error);
        gets.failAll(this, error);
        atomics.terminate(error);
        accessEpochs.terminate(error);
        exposures.terminate();
        peerRegions.terminate(error instanceof ConnectionClosedException ? "the connection " + name + " is closed"
            : "the connection " + name + " failed: " + error.getMessage());
        exposureEpochs.end();
        control.clear();
    }

    Exposures exposures() {
        return exposures;
    }

    PeerRegions peerRegions() {
        return peerRegions;
    }

    // ---------------------------------------------------------------- diagnostics

    /** Memory registrations made for exposures and not deregistered (any thread): 0 after close, or a leak. */
    public int exposureRegistrations() {
        return exposures.registered();
    }

    /** Regions of the peer this side holds (not released), progress thread. */
    public int peerRegionsHeld() {
        return peerRegions.held();
    }

    /** RDMA fragments posted and not completed, progress thread. */
    public int fragmentsPosted() {
        return fragments.posted();
    }

    /** Fragments posted again after their rail failed. */
    public long fragmentsReposted() {
        return repostedFragments;
    }

    /** Bytes of puts ({@code put}) or gets posted on {@code rail} so far. */
    public long bytesPostedOn(boolean put, int rail) {
        return (put ? puts : gets).bytesPostedOn(rail);
    }

    /** Atomics answered so far. */
    public long atomicsCompleted() {
        return atomics.completed();
    }

    /** Atomics posted and not answered, progress thread. */
    public int atomicsInFlight() {
        return atomics.inFlight();
    }

    /** EPOCH_SYNC frames sent so far. */
    public long syncsSent() {
        return accessEpochs.syncsSent();
    }

    @Override
    public String toString() {
        return "one-sided engine of " + name;
    }
}
