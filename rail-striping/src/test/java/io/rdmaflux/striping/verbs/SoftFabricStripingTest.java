package io.rdmaflux.striping.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.RailAttributes;
import io.rdmaflux.striping.Rails;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingMetrics;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortState;
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
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Scannable;
import reactor.core.publisher.Flux;
import reactor.test.subscriber.TestSubscriber;

/**
 * The striping operator over the soft provider's in-JVM fabric: two hosts, two shaped ports each
 * (1 GB/s and 250 MB/s, 2 µs), one RC queue pair per port, stripes as RDMA WRITEs, all in virtual
 * time (INVOKER mode, one {@code VirtualClock}).
 */
class SoftFabricStripingTest {
    static final long GB = 1_000_000_000L;
    static final long MIB = 1 << 20;
    static final int SLOTS = 8;
    /**
     * Messages until within 5% of 4:1 on the soft fabric, 4 in flight (measured: 6). The RC retry
     * timeout must exceed a stripe's serialization time: with 100 µs against 840 µs writes the
     * requester rewinds (go-back-N) while the write is still on the wire and the duplicate
     * transmissions show up as noise in the delivery times.
     */
    static final int SOFT_CONVERGENCE_BOUND = 8;

    private VerbsLeakCheck leaks;
    private final VirtualClock clock = new VirtualClock();
    private SoftProvider hostA;
    private SoftProvider hostB;
    private final ByteBuffer srcMemory = ByteBuffer.allocateDirect((int) (SLOTS * MIB));
    private final ByteBuffer dstMemory = ByteBuffer.allocateDirect((int) (SLOTS * MIB));
    private RailBuffers buffers;
    private final List<RdmaRail> rails = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();

    /**
     * Each host has two devices (two HCAs, seed 000 §6.1's testbed), one port each: the rails. The
     * buffers are registered on both devices (seed 000 §5.1). Two ports of one soft device are not
     * used: the device delivers its frames in one monotone order, which couples its ports.
     */
    /** Short enough for the port-down test to see RETRY_EXC_ERR soon, longer than a 1 MiB write at 250 MB/s. */
    private final long retryTimeoutNs = 10_000_000;

    @BeforeEach
    void fabric() {
        leaks = VerbsLeakCheck.begin();
        SoftFabric fabric = SoftFabric.mem("striping-" + System.identityHashCode(this));
        RailConfig fast = RailConfig.builder().bandwidthBytesPerSec(GB).latencyNs(2_000).build();
        hostA = SoftProvider.builder().name("sa" + System.identityHashCode(this)).fabric(fabric).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).devices(2).rail(fast).build();
        hostB = SoftProvider.builder().name("sb" + System.identityHashCode(this)).fabric(fabric).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).devices(2).rail(fast).build();
        RailConfig slow = RailConfig.builder().bandwidthBytesPerSec(GB / 4).latencyNs(2_000).build();
        ((SoftPort) hostA.devices().get(1).port(1)).setRail(slow);
        ((SoftPort) hostB.devices().get(1).port(1)).setRail(slow);
        List<MemoryRegion> local = new ArrayList<>();
        int[] rkeys = new int[2];
        long remoteAddress = 0;
        for (int rail = 0; rail < 2; rail++) {
            Device da = hostA.devices().get(rail);
            Device db = hostB.devices().get(rail);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue cqa = da.createCompletionQueue(4096);
            CompletionQueue cqb = db.createCompletionQueue(4096);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(cqa).maxSendWr(1024)
                .retryCount(2).retryTimeoutNs(retryTimeoutNs).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cqb).maxReceiveWr(16).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion src = pa.registerMemory(srcMemory, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.registerMemory(dstMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            local.add(src);
            rkeys[rail] = dst.rkey();
            remoteAddress = dst.address();
            // closed in reverse order: regions and QPs before CQs and PDs
            resources.addAll(List.of(pa, pb, cqa, cqb, qa, qb, src, dst));
            rails.add(new RdmaRail(qa, cqa));
        }
        buffers = RailBuffers.of(local, remoteAddress, rkeys);
        for (int i = 0; i < SLOTS * MIB; i++) {
            // position-dependent, so a stripe landing at the wrong offset shows
            srcMemory.put(i, (byte) (i * 31 + (i >>> 11)));
        }
    }

    @AfterEach
    void closeAndCheckLeaks() throws Exception {
        for (int i = resources.size() - 1; i >= 0; i--) {
            resources.get(i).close();
        }
        hostA.close();
        hostB.close();
        leaks.assertClean();
    }

    private RdmaPut put(long i) {
        return new RdmaPut(buffers, (i % SLOTS) * MIB, MIB);
    }

    /** Drives both hosts and the rails' completion queues until {@code ts} terminates. */
    private void run(TestSubscriber<?> ts, LongConsumer atTime) {
        for (int pass = 0; pass < 20_000_000 && !ts.isTerminated(); pass++) {
            long now = clock.nanoTime();
            atTime.accept(now);
            int work = hostA.progress(now) + hostB.progress(now);
            for (RdmaRail r : rails) {
                work += r.poll(now);
            }
            if (work == 0) {
                clock.advance(1_000);
            }
        }
        assertTrue(ts.isTerminated(), "not terminated by virtual time " + clock.nanoTime());
    }

    private void assertTargetEqualsSource() {
        ByteBuffer s = srcMemory;
        ByteBuffer d = dstMemory;
        for (int i = 0; i < SLOTS * MIB; i++) {
            if (s.get(i) != d.get(i)) {
                throw new AssertionError("byte " + i + " differs: " + d.get(i) + " instead of " + s.get(i));
            }
        }
    }

    private static int updatesToConverge(List<StripingMetrics.WeightSample> h) {
        int last = -1;
        for (int i = 0; i < h.size(); i++) {
            double ratio = h.get(i).shares()[0] / h.get(i).shares()[1];
            if (ratio < 3.8 || ratio > 4.2) {
                last = i;
            }
        }
        return last + 1;
    }

    @Test
    void adaptiveStripingConvergesTo4To1OverShapedSoftPorts() {
        RailsSpec spec = RailsSpec.rails(2).striping(StripingPolicies.adaptive()).maxInFlightMessages(4).switchoverThresholdBytes(0);
        List<Scannable> scans = new ArrayList<>();
        Flux<RdmaTransfer> out = Flux.fromStream(LongStream.range(0, 40).boxed()).<RdmaTransfer>map(this::put)
            .transform(Rails.stripe(spec, rails, RdmaTransfer::lengthBytes, clock::nanoTime))
            .doOnSubscribe(s -> scans.add(Scannable.from(s)));
        TestSubscriber<RdmaTransfer> ts = TestSubscriber.create();
        out.subscribe(ts);
        run(ts, now -> { });
        assertTrue(ts.isTerminatedComplete(), () -> String.valueOf(ts.getTerminalSignal()));
        assertEquals(40, ts.getReceivedOnNext().size());
        StripingMetrics m = scans.get(0).scanOrDefault(RailAttributes.METRICS, null);
        assertNotNull(m);
        int n = updatesToConverge(m.weightHistory());
        System.out.println("soft fabric: adaptive within 5% of 4:1 after " + n + " messages");
        assertTrue(n <= SOFT_CONVERGENCE_BOUND, "converged after " + n + " messages: " + m.weightHistory());
        assertEquals(0.8, m.weights()[0], 0.01);
        assertEquals(40 * MIB, m.totalBytes());
        assertTargetEqualsSource();
    }

    @Test
    void aPortTakenDownMidStreamLosesNoPutAndDuplicatesNone() {
        RailsSpec spec = RailsSpec.rails(2).striping(StripingPolicies.adaptive()).multiplexing(MultiplexingPolicies.roundRobin())
            .maxInFlightMessages(8).switchoverThresholdBytes(256 * 1024);
        Flux<RdmaTransfer> out = Flux.fromStream(LongStream.range(0, 60).boxed())
            .<RdmaTransfer>map(i -> i % 2 == 0 ? put(i) : new RdmaPut(buffers, (i % SLOTS) * MIB, 64 * 1024))
            .transform(Rails.stripe(spec, rails, RdmaTransfer::lengthBytes, clock::nanoTime));
        TestSubscriber<RdmaTransfer> ts = TestSubscriber.create();
        out.subscribe(ts);
        boolean[] downed = new boolean[1];
        run(ts, now -> {
            if (!downed[0] && now >= 5_000_000) {
                downed[0] = true;
                ((SoftPort) hostA.devices().get(0).port(1)).setState(PortState.DOWN);
            }
        });
        assertTrue(downed[0]);
        assertTrue(ts.isTerminatedComplete(), () -> String.valueOf(ts.getTerminalSignal()));
        List<RdmaTransfer> got = ts.getReceivedOnNext();
        assertEquals(60, got.size());
        for (int i = 0; i < 60; i++) {
            assertEquals(i % 2 == 0 ? MIB : 64 * 1024, got.get(i).lengthBytes(), "put " + i + " out of order");
            assertEquals((i % SLOTS) * MIB, got.get(i).offset(), "put " + i + " out of order");
        }
        assertTrue(rails.get(0).failed());
        // every put's bytes are in place: the last writes of every slot came from the surviving rail too
        for (long i = 52; i < 60; i += 2) {
            long off = (i % SLOTS) * MIB;
            for (long b = off; b < off + MIB; b += 4093) {
                assertEquals(srcMemory.get((int) b), dstMemory.get((int) b), "byte " + b);
            }
        }
    }
}
