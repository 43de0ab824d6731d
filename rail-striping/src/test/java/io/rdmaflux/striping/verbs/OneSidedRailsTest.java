package io.rdmaflux.striping.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
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
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.testing.VerbsLeakCheck;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Seed 002 §3 over the soft fabric in virtual time: two 1 GB/s rails (one device each), puts and
 * gets with separate queues and load-balanced fragmentation.
 */
class OneSidedRailsTest {
    static final long GB = 1_000_000_000L;
    static final int MIB = 1 << 20;
    static final int N = 8;

    private VerbsLeakCheck leaks;
    private final VirtualClock clock = new VirtualClock();
    private SoftProvider hostA;
    private SoftProvider hostB;
    private final ByteBuffer putSource = ByteBuffer.allocateDirect(N * MIB);
    private final ByteBuffer putTarget = ByteBuffer.allocateDirect(N * MIB);
    private final ByteBuffer getSource = ByteBuffer.allocateDirect(N * MIB);
    private final ByteBuffer getTarget = ByteBuffer.allocateDirect(N * MIB);
    private RailBuffers putBuffers;
    private RailBuffers getBuffers;
    private final List<RdmaRail> rails = new ArrayList<>();
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void fabric() {
        leaks = VerbsLeakCheck.begin();
        SoftFabric fabric = SoftFabric.mem("one-sided-" + System.identityHashCode(this));
        RailConfig rail = RailConfig.builder().bandwidthBytesPerSec(GB).latencyNs(2_000).build();
        hostA = SoftProvider.builder().name("osa" + System.identityHashCode(this)).fabric(fabric).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).devices(2).rail(rail).build();
        hostB = SoftProvider.builder().name("osb" + System.identityHashCode(this)).fabric(fabric).clock(clock)
            .threadingMode(ThreadingMode.INVOKER).devices(2).rail(rail).build();
        List<MemoryRegion> putLocal = new ArrayList<>();
        List<MemoryRegion> getLocal = new ArrayList<>();
        int[] putRkeys = new int[2];
        int[] getRkeys = new int[2];
        long putRemote = 0;
        long getRemote = 0;
        for (int r = 0; r < 2; r++) {
            Device da = hostA.devices().get(r);
            Device db = hostB.devices().get(r);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue cqa = da.createCompletionQueue(4096);
            CompletionQueue cqb = db.createCompletionQueue(4096);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(cqa).maxSendWr(1024)
                .retryTimeoutNs(100_000_000).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cqb).maxReceiveWr(16)
                .retryTimeoutNs(100_000_000).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion ps = pa.registerMemory(putSource, Access.LOCAL_WRITE);
            MemoryRegion pt = pb.registerMemory(putTarget, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            MemoryRegion gt = pa.registerMemory(getTarget, Access.LOCAL_WRITE);
            MemoryRegion gs = pb.registerMemory(getSource, Access.LOCAL_WRITE | Access.REMOTE_READ);
            putLocal.add(ps);
            getLocal.add(gt);
            putRkeys[r] = pt.rkey();
            getRkeys[r] = gs.rkey();
            putRemote = pt.address();
            getRemote = gs.address();
            resources.addAll(List.of(pa, pb, cqa, cqb, qa, qb, ps, pt, gt, gs));
            rails.add(new RdmaRail(qa, cqa));
        }
        putBuffers = RailBuffers.of(putLocal, putRemote, putRkeys);
        getBuffers = RailBuffers.of(getLocal, getRemote, getRkeys);
        for (int i = 0; i < N * MIB; i++) {
            putSource.put(i, (byte) (i * 31 + (i >>> 11)));
            getSource.put(i, (byte) (i * 17 + (i >>> 9) + 3));
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

    /** Issues the puts and gets (interleaved) and drives until all completed; returns the virtual ns taken. */
    private long epoch(OneSidedRails os, int putCount, int getCount) {
        long start = clock.nanoTime();
        int issuedPuts = 0;
        int issuedGets = 0;
        int[] done = {0};
        for (int pass = 0; pass < 10_000_000 && done[0] < putCount + getCount; pass++) {
            long now = clock.nanoTime();
            while (issuedPuts < putCount || issuedGets < getCount) {
                boolean progressed = false;
                if (issuedPuts < putCount && os.put(new RdmaPut(putBuffers, (long) issuedPuts * MIB, MIB), now) >= 0) {
                    issuedPuts++;
                    progressed = true;
                }
                if (issuedGets < getCount && os.get(new RdmaGet(getBuffers, (long) issuedGets * MIB, MIB), now) >= 0) {
                    issuedGets++;
                    progressed = true;
                }
                if (!progressed) {
                    break;
                }
            }
            int work = hostA.progress(now) + hostB.progress(now) + os.poll(now);
            os.pollCompleted((t, psn, len) -> done[0]++);
            if (work == 0) {
                clock.advance(1_000);
            }
        }
        assertEquals(putCount + getCount, done[0], "not all transfers completed");
        return clock.nanoTime() - start;
    }

    private static RailsSpec spec() {
        return RailsSpec.rails(2).striping(StripingPolicies.loadBalanced()).switchoverThresholdBytes(64 * 1024).maxInFlightMessages(8);
    }

    @Test
    void putsAndGetsLandInPlaceOverBothRails() {
        OneSidedRails os = new OneSidedRails(spec(), rails);
        epoch(os, N, N);
        for (int i = 0; i < N * MIB; i += 511) {
            assertEquals(putSource.get(i), putTarget.get(i), "put byte " + i);
            assertEquals(getSource.get(i), getTarget.get(i), "get byte " + i);
        }
        assertEquals((long) N * MIB, os.putMetrics().totalBytes());
        assertEquals((long) N * MIB, os.getMetrics().totalBytes());
        // load-balanced fragmentation on idle equal rails is an equal split
        assertEquals(os.putMetrics().railBytes()[0], os.putMetrics().railBytes()[1]);
        assertEquals(os.getMetrics().railBytes()[0], os.getMetrics().railBytes()[1]);
    }

    @Test
    void interleavedPutsAndGetsUseBothLinkDirections() {
        OneSidedRails os = new OneSidedRails(spec(), rails);
        long putsAlone = epoch(os, N, 0);
        long getsAlone = epoch(os, 0, N);
        long interleaved = epoch(os, N, N);
        // puts load A->B, gets B->A: together they take about as long as the longer of the two
        assertTrue(interleaved < 0.6 * (putsAlone + getsAlone),
            "interleaved " + interleaved + " ns vs puts " + putsAlone + " + gets " + getsAlone);
        System.out.println("one-sided: puts " + putsAlone + " ns, gets " + getsAlone + " ns, interleaved " + interleaved + " ns");
    }

    @Test
    void rejectsARailCountThatDoesNotMatchTheSpec() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new OneSidedRails(RailsSpec.rails(3), rails));
        assertTrue(e.getMessage().contains("spec has 3 rails but 2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new RdmaGet(getBuffers, N * MIB - 10, 11));
        assertTrue(e.getMessage().contains("get of 11 bytes at offset"), e.getMessage());
    }
}
