package io.rdmaflux.benchmarks.striping;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.RailSubchannel;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.verbs.RailBuffers;
import io.rdmaflux.striping.verbs.RdmaPut;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import io.rdmaflux.striping.verbs.RdmaRail;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VirtualClock;
import io.rdmaflux.verbs.soft.RailConfig;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftPort;
import io.rdmaflux.verbs.soft.SoftProvider;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

/**
 * Two soft hosts on a private mem fabric, one device (HCA) per rail with one shaped port each, one
 * RC queue pair per rail, a 16 MiB buffer registered on every device at both ends. INVOKER mode:
 * the calling thread drives both providers and the rails' completion queues, in real time.
 */
final class StripingBench implements AutoCloseable {
    static final int BUFFER_BYTES = 16 << 20;
    static final long LATENCY_NS = 2_000;
    static final long RETRY_TIMEOUT_NS = 200_000_000L;
    /**
     * Token-bucket depth of every rail: how far ahead of the link the soft NIC queues frames. A
     * hardware NIC serializes posted work requests without the CPU; the soft NIC only queues frames
     * while the driving thread runs, so with the 256 KiB default (0.65 ms at 400 MB/s) a thread
     * descheduled for one time slice on a busy 2-core machine left the rail idle. As deep as the
     * buffer (everything the bench can have posted), the link stays busy across such a gap like a
     * hardware NIC's. The depth only lets frames queue: the GCRA earns no credit while idle, so no
     * rail ever exceeds its rate.
     */
    static final long BURST_BYTES = Long.getLong("striping.burstBytes", BUFFER_BYTES);

    private static int counter;

    final NanoClock clock;
    private final @org.jspecify.annotations.Nullable VirtualClock virtualClock;
    final SoftProvider hostA;
    final SoftProvider hostB;
    final List<RdmaRail> rails = new ArrayList<>();
    final RailBuffers buffers;
    private final List<AutoCloseable> resources = new ArrayList<>();
    private final ByteBuffer srcMemory = ByteBuffer.allocateDirect(BUFFER_BYTES);
    private final ByteBuffer dstMemory = ByteBuffer.allocateDirect(BUFFER_BYTES);
    /**
     * Real time: spin briefly, then yield, then park up to 20 µs when a pass found nothing to do.
     * A thread that always spins is, to the kernel, a CPU hog: on a loaded 2-core machine it is
     * descheduled for whole time slices (the rails then idle once their queue drains), while one
     * that sleeps when idle is woken promptly. 20 µs is far below the rails' queue depth.
     */
    private final IdleStrategy idle = Boolean.getBoolean("striping.spin") ? new org.agrona.concurrent.BusySpinIdleStrategy()
        : new BackoffIdleStrategy(20, 10, 1_000, 20_000);

    StripingBench(long... railBytesPerSec) {
        this(false, railBytesPerSec);
    }

    /**
     * @param virtualTime drive a {@link VirtualClock} (advanced 1 µs whenever a pass does no work)
     *                    instead of the system clock: deterministic figures, independent of the load
     *                    of the machine
     */
    StripingBench(boolean virtualTime, long... railBytesPerSec) {
        this.virtualClock = virtualTime ? new VirtualClock() : null;
        this.clock = virtualTime ? virtualClock : new SystemNanoClock();
        int n;
        synchronized (StripingBench.class) {
            n = counter++;
        }
        SoftFabric fabric = SoftFabric.mem("striping-bench-" + n);
        int railCount = railBytesPerSec.length;
        hostA = SoftProvider.builder().name("stripe-a" + n).fabric(fabric).clock(clock).threadingMode(ThreadingMode.INVOKER)
            .devices(railCount).build();
        hostB = SoftProvider.builder().name("stripe-b" + n).fabric(fabric).clock(clock).threadingMode(ThreadingMode.INVOKER)
            .devices(railCount).build();
        List<MemoryRegion> local = new ArrayList<>();
        int[] rkeys = new int[railCount];
        long remote = 0;
        for (int rail = 0; rail < railCount; rail++) {
            Device da = hostA.devices().get(rail);
            Device db = hostB.devices().get(rail);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue cqa = da.createCompletionQueue(4096);
            CompletionQueue cqb = db.createCompletionQueue(4096);
            // the RC retry timeout must exceed the serialization time of a queued stripe (4 MiB at 100 MB/s:
            // 42 ms), or the requester rewinds while a write is still on the wire
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(cqa).maxSendWr(1024)
                .retryTimeoutNs(RETRY_TIMEOUT_NS).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cqb).maxReceiveWr(16).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion src = pa.registerMemory(srcMemory, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.registerMemory(dstMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            local.add(src);
            rkeys[rail] = dst.rkey();
            remote = dst.address();
            resources.addAll(List.of(pa, pb, cqa, cqb, qa, qb, src, dst));
            rails.add(new RdmaRail(qa, cqa));
        }
        buffers = RailBuffers.of(local, remote, rkeys);
        for (int rail = 0; rail < railCount; rail++) {
            setRate(rail, railBytesPerSec[rail]);
        }
    }

    /** Sets the shaping of {@code rail} at both ends (a capacity change, seed 000 Fig. 20). */
    void setRate(int rail, long bytesPerSec) {
        RailConfig config = RailConfig.builder().bandwidthBytesPerSec(bytesPerSec).latencyNs(LATENCY_NS)
            .burstBytes(BURST_BYTES).build();
        ((SoftPort) hostA.devices().get(rail).port(1)).setRail(config);
        ((SoftPort) hostB.devices().get(rail).port(1)).setRail(config);
    }

    /** A scheduler posting on this bench's rails; the rails report to it until another is attached. */
    CommunicationScheduler<RdmaTransfer> scheduler(RailsSpec spec) {
        CommunicationScheduler<RdmaTransfer> s = new CommunicationScheduler<>(spec, stripe -> rails.get(stripe.rail()).post(stripe));
        attach(s);
        return s;
    }

    /** Makes the rails report to {@code s}; only while no stripe is outstanding. */
    void attach(CommunicationScheduler<RdmaTransfer> s) {
        RailSubchannel.StripeListener listener = new RailSubchannel.StripeListener() {
            @Override
            public void onStripeCompleted(int rail, long stripeId, long nowNs) {
                s.onStripeCompleted(rail, stripeId, nowNs);
            }

            @Override
            public void onRailFailed(int rail, Throwable cause, long nowNs) {
                s.onRailFailed(rail, cause, nowNs);
            }
        };
        for (int rail = 0; rail < rails.size(); rail++) {
            rails.get(rail).start(rail, listener);
        }
    }

    /** One driving pass: both providers, then every rail's completion queue. */
    int progress() {
        long now = clock.nanoTime();
        int work = hostA.progress(now) + hostB.progress(now);
        // completions are stamped when they are seen, after the providers' pass (which copies data)
        long seen = clock.nanoTime();
        for (RdmaRail r : rails) {
            work += r.poll(seen);
        }
        if (work == 0 && virtualClock != null) {
            virtualClock.advance(1_000);
        }
        return work;
    }

    /**
     * Sends {@code messages} puts of {@code sizeBytes} (cycling over the buffer) and drives until all
     * completed; returns the elapsed ns.
     */
    long transfer(CommunicationScheduler<RdmaTransfer> s, int messages, long sizeBytes) {
        long start = clock.nanoTime();
        int sent = 0;
        int[] done = {0};
        long slots = BUFFER_BYTES / sizeBytes;
        while (done[0] < messages) {
            while (sent < messages) {
                RdmaPut put = new RdmaPut(buffers, (sent % slots) * sizeBytes, sizeBytes);
                if (s.send(put, sizeBytes, clock.nanoTime()) < 0) {
                    break;
                }
                sent++;
            }
            int work = progress();
            work += s.pollCompleted(Integer.MAX_VALUE, (m, psn, len) -> done[0]++);
            if (virtualClock == null) {
                idle.idle(work);
            }
            if (s.noRailCause() != null) {
                throw new IllegalStateException("rails failed", s.noRailCause());
            }
        }
        return clock.nanoTime() - start;
    }

    @Override
    public void close() {
        for (int i = resources.size() - 1; i >= 0; i--) {
            try {
                resources.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        hostA.close();
        hostB.close();
    }
}
