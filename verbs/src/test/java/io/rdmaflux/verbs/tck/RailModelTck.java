package io.rdmaflux.verbs.tck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.AddressHandle;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.LossGenerator;
import io.rdmaflux.verbs.soft.RailConfig;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The rail-model part of the provider TCK: bandwidth shaping and latency measured in virtual time
 * (within 1%), and seeded fault injection that reproduces exactly. Only for providers with a rail
 * model and a virtual clock (the soft provider); a hardware provider does not run it.
 */
public abstract class RailModelTck {
    /** A fresh virtual-time fixture whose hosts have {@code portsPerDevice} ports with {@code rail}. */
    protected abstract TckFixture createFixture(int portsPerDevice, RailConfig rail);

    private static final long GB = 1_000_000_000L;

    /** One run: fixture, PDs, CQs; closed and leak-checked by {@link #close()}. */
    private final class Run implements AutoCloseable {
        final TckFixture fx;
        final Device da;
        final Device db;
        final ProtectionDomain pa;
        final ProtectionDomain pb;
        final CompletionQueue ca;
        final CompletionQueue cb;

        Run(int ports, RailConfig rail) {
            fx = createFixture(ports, rail);
            da = fx.deviceA();
            db = fx.deviceB();
            pa = da.allocateProtectionDomain();
            pb = db.allocateProtectionDomain();
            ca = da.createCompletionQueue(1 << 14);
            cb = db.createCompletionQueue(1 << 14);
        }

        QueuePair[] rc(int port) {
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(port)).cq(ca).maxSendWr(1024).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(port)).cq(cb).maxReceiveWr(1024).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            return new QueuePair[] {qa, qb};
        }

        QueuePair ud(ProtectionDomain pd, Device d, CompletionQueue cq) {
            QueuePair qp = pd.createQueuePair(QpInitAttributes.builder(QpType.UD, d.port(1)).cq(cq)
                .maxSendWr(1 << 13).maxReceiveWr(1 << 13).build());
            qp.connect(null);
            return qp;
        }

        /** Runs until {@code done}, stepping {@code stepNs} when idle; returns the virtual time it took. */
        long runUntil(BooleanSupplier done, long stepNs) {
            long start = fx.nowNs();
            for (int i = 0; i < 5_000_000 && !done.getAsBoolean(); i++) {
                if (fx.progress() == 0) {
                    fx.advanceNs(stepNs);
                }
            }
            assertTrue(done.getAsBoolean(), "not done within the pass budget");
            return fx.nowNs() - start;
        }

        List<WorkCompletion> collect(CompletionQueue cq, List<WorkCompletion> into) {
            cq.poll(1 << 14, wc -> into.add(wc.copy()));
            return into;
        }

        @Override
        public void close() {
            fx.close();
            fx.assertNoLeaks();
        }
    }

    private static long writeAll(Run r, QueuePair qp, int count, int size) {
        MemoryRegion src = r.pa.allocateMemory(size, Access.LOCAL_WRITE);
        MemoryRegion dst = r.pb.allocateMemory(size, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
        SendWorkRequest wr = new SendWorkRequest().opcode(WrOpcode.RDMA_WRITE).sge(src, 0, size)
            .remoteAddress(dst.address()).rkey(dst.rkey());
        for (int i = 0; i < count; i++) {
            assertTrue(qp.postSend(wr.wrId(i).signaled(i == count - 1)));
        }
        List<WorkCompletion> done = new ArrayList<>();
        long t = r.runUntil(() -> !r.collect(r.ca, done).isEmpty(), 1_000);
        assertEquals(WcStatus.SUCCESS, done.get(0).status(), done.get(0)::toString);
        return t;
    }

    private static void assertWithinOnePercent(double expected, double actual, String what) {
        assertTrue(Math.abs(actual - expected) <= expected * 0.01,
            what + ": expected " + expected + " but measured " + actual + " (" + (100.0 * (actual - expected) / expected) + "% off)");
    }

    @Test
    void rdmaWriteThroughputMatchesTheRailBandwidthWithinOnePercent() {
        try (Run r = new Run(1, RailConfig.builder().bandwidthBytesPerSec(GB).build())) {
            int count = 256;
            int size = 64 * 1024;
            long ns = writeAll(r, r.rc(1)[0], count, size);
            assertWithinOnePercent((double) count * size * 1e9 / GB, ns, "transfer time of 16 MiB at 1 GB/s, ns");
        }
    }

    @Test
    void slowerRailTakesProportionallyLonger() {
        try (Run r = new Run(2, RailConfig.builder().bandwidthBytesPerSec(GB).build())) {
            RailConfig slow = RailConfig.builder().bandwidthBytesPerSec(GB / 4).build();
            r.fx.setRail(r.da.port(2), slow);
            r.fx.setRail(r.db.port(2), slow);
            long fast = writeAll(r, r.rc(1)[0], 64, 64 * 1024);
            long slowNs = writeAll(r, r.rc(2)[0], 64, 64 * 1024);
            assertWithinOnePercent(4.0, (double) slowNs / fast, "slow/fast time ratio");
        }
    }

    @Test
    void latencyDelaysDeliveryOneWayAndCompletionRoundTrip() {
        long latency = 50_000;
        try (Run r = new Run(1, RailConfig.builder().latencyNs(latency).build())) {
            QueuePair[] qp = r.rc(1);
            MemoryRegion src = r.pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = r.pb.allocateMemory(64, Access.LOCAL_WRITE);
            assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(1).sge(dst, 0, 64)));
            long start = r.fx.nowNs();
            assertTrue(qp[0].postSend(new SendWorkRequest().wrId(2).sge(src, 0, 64)));
            List<WorkCompletion> recv = new ArrayList<>();
            long oneWay = r.runUntil(() -> !r.collect(r.cb, recv).isEmpty(), 100);
            List<WorkCompletion> sent = new ArrayList<>();
            r.runUntil(() -> !r.collect(r.ca, sent).isEmpty(), 100);
            long roundTrip = r.fx.nowNs() - start;
            assertWithinOnePercent(latency, oneWay, "one-way delivery time");
            assertWithinOnePercent(2 * latency, roundTrip, "send completion time");
        }
    }

    @Test
    void udThroughputIsShapedToo() {
        long bw = 100_000_000L;
        try (Run r = new Run(1, RailConfig.builder().bandwidthBytesPerSec(bw).build())) {
            QueuePair qa = r.ud(r.pa, r.da, r.ca);
            QueuePair qb = r.ud(r.pb, r.db, r.cb);
            MemoryRegion src = r.pa.allocateMemory(4096, Access.LOCAL_WRITE);
            MemoryRegion dst = r.pb.allocateMemory(4096, Access.LOCAL_WRITE);
            int n = 1000;
            for (int i = 0; i < n; i++) {
                assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, 0, 4096)));
            }
            AddressHandle ah = r.pa.createAddressHandle(r.da.port(1), r.db.port(1).address());
            SendWorkRequest wr = new SendWorkRequest().sge(src, 0, 4096).ud(ah, qb.qpNumber(), qb.attributes().qkey()).signaled(false);
            for (int i = 0; i < n; i++) {
                assertTrue(qa.postSend(wr.wrId(i)));
            }
            List<WorkCompletion> recv = new ArrayList<>();
            long ns = r.runUntil(() -> r.collect(r.cb, recv).size() >= n, 1_000);
            assertWithinOnePercent(n * 4096.0 * 1e9 / bw, ns, "time to deliver 1000 x 4 KiB datagrams at 100 MB/s, ns");
        }
    }

    /** Sends {@code n} sequence-numbered datagrams; returns what arrived, in order: seq, or -1 - seq when corrupted. */
    private List<Integer> udTrace(RailConfig rail, int n) {
        try (Run r = new Run(1, rail)) {
            QueuePair qa = r.ud(r.pa, r.da, r.ca);
            QueuePair qb = r.ud(r.pb, r.db, r.cb);
            int size = 256;
            MemoryRegion src = r.pa.allocateMemory((long) size * n, Access.LOCAL_WRITE);
            MemoryRegion dst = r.pb.allocateMemory((long) size * 2 * n, Access.LOCAL_WRITE);
            ByteBuffer s = src.buffer();
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < size; k += 4) {
                    s.putInt(i * size + k, i * 1_000_003 + k);
                }
            }
            for (int i = 0; i < 2 * n; i++) {
                assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, (long) i * size, size)));
            }
            AddressHandle ah = r.pa.createAddressHandle(r.da.port(1), r.db.port(1).address());
            SendWorkRequest wr = new SendWorkRequest().ud(ah, qb.qpNumber(), qb.attributes().qkey()).signaled(false);
            for (int i = 0; i < n; i++) {
                assertTrue(qa.postSend(wr.wrId(i).sge(src, (long) i * size, size)));
            }
            List<WorkCompletion> recv = new ArrayList<>();
            for (int i = 0; i < 2000; i++) {
                r.fx.progress();
                r.fx.advanceNs(1_000);
                r.collect(r.cb, recv);
            }
            ByteBuffer d = dst.buffer();
            List<Integer> trace = new ArrayList<>();
            for (WorkCompletion wc : recv) {
                assertEquals(WcStatus.SUCCESS, wc.status());
                int off = (int) wc.wrId() * size;
                int first = d.getInt(off);
                int seq = first % 1_000_003 == 0 ? first / 1_000_003 : (d.getInt(off + size - 4) - (size - 4)) / 1_000_003;
                boolean intact = true;
                for (int k = 0; k < size; k += 4) {
                    intact &= d.getInt(off + k) == seq * 1_000_003 + k;
                }
                trace.add(intact ? seq : -1 - seq);
            }
            return trace;
        }
    }

    @Test
    void seededRandomLossIsReproducibleAndNearItsRate() {
        RailConfig rail = RailConfig.builder().loss(LossGenerator.random(0.1, 42)).build();
        List<Integer> first = udTrace(rail, 2000);
        List<Integer> second = udTrace(rail, 2000);
        assertEquals(first, second, "same seed, same datagrams lost");
        int lost = 2000 - first.size();
        assertTrue(lost > 140 && lost < 260, "lost " + lost + " of 2000 at 10%");
        List<Integer> other = udTrace(RailConfig.builder().loss(LossGenerator.random(0.1, 43)).build(), 2000);
        assertTrue(!first.equals(other), "another seed loses other datagrams");
    }

    @Test
    void fixedGapAndBurstLossDropExactlyTheirPattern() {
        List<Integer> gap = udTrace(RailConfig.builder().loss(LossGenerator.fixedGap(10)).build(), 100);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            if (i % 10 != 9) {
                expected.add(i);
            }
        }
        assertEquals(expected, gap);
        RailConfig burst = RailConfig.builder().loss(LossGenerator.burst(0.02, 0.25, 5)).build();
        List<Integer> b1 = udTrace(burst, 1000);
        assertEquals(b1, udTrace(burst, 1000));
        int runs = 0;
        int lost = 0;
        for (int i = 0, j = 0; i < 1000; i++) {
            boolean present = j < b1.size() && b1.get(j) == i;
            if (present) {
                j++;
            } else {
                lost++;
                if (i == 0 || (j > 0 && b1.get(j - 1) == i - 1)) {
                    runs++;
                }
            }
        }
        assertTrue(lost > 0 && (double) lost / runs > 1.5, "losses come in bursts: " + lost + " lost in " + runs + " runs");
    }

    @Test
    void udDuplicationReorderingAndCorruptionAreSeededAndReproducible() {
        RailConfig rail = RailConfig.builder().duplicateRate(0.05).reorderRate(0.05).corruptRate(0.05).faultSeed(9).build();
        List<Integer> t1 = udTrace(rail, 1000);
        assertEquals(t1, udTrace(rail, 1000), "same seed, same faults");
        long corrupted = t1.stream().filter(s -> s < 0).count();
        long distinct = t1.stream().map(s -> s < 0 ? -1 - s : s).distinct().count();
        int late = 0;
        int highest = -1;
        java.util.Set<Integer> seen = new java.util.HashSet<>();
        for (int raw : t1) {
            int seq = raw < 0 ? -1 - raw : raw;
            if (seen.add(seq) && seq < highest) {
                late++;
            }
            highest = Math.max(highest, seq);
        }
        assertEquals(1000, distinct, "nothing lost");
        assertTrue(t1.size() > 1020, "duplicates: " + (t1.size() - 1000));
        assertTrue(late > 20 && late < 100, "overtaken by later datagrams: " + late);
        assertTrue(corrupted > 20 && corrupted < 100, "corrupted: " + corrupted);
    }

    @Test
    void rcIsNotAffectedByTheUdLossModel() {
        try (Run r = new Run(1, RailConfig.builder().loss(LossGenerator.random(0.5, 1)).build())) {
            QueuePair[] qp = r.rc(1);
            MemoryRegion src = r.pa.allocateMemory(100, Access.LOCAL_WRITE);
            MemoryRegion dst = r.pb.allocateMemory(100 * 100, Access.LOCAL_WRITE);
            for (int i = 0; i < 100; i++) {
                src.buffer().put(0, (byte) i);
                assertTrue(qp[1].postReceive(new ReceiveWorkRequest().wrId(i).sge(dst, i * 100L, 100)));
                assertTrue(qp[0].postSend(new SendWorkRequest().wrId(i).sge(src, 0, 100).inline(false)));
                List<WorkCompletion> s = new ArrayList<>();
                r.runUntil(() -> !r.collect(r.ca, s).isEmpty(), 1_000);
            }
            List<WorkCompletion> recv = new ArrayList<>();
            r.runUntil(() -> r.collect(r.cb, recv).size() >= 100, 1_000);
            byte[] firsts = new byte[100];
            byte[] expected = new byte[100];
            for (int i = 0; i < 100; i++) {
                firsts[i] = dst.buffer().get(i * 100);
                expected[i] = (byte) i;
            }
            assertArrayEquals(expected, firsts);
        }
    }

    @Test
    void portReportsItsRailModel() {
        RailConfig rail = RailConfig.builder().bandwidthBytesPerSec(12_500_000_000L).latencyNs(700).mtuBytes(2048).build();
        try (Run r = new Run(1, rail)) {
            Port p = r.da.port(1);
            assertEquals(12_500_000_000L, p.bandwidthBytesPerSec());
            assertEquals(700, p.latencyNs());
            assertEquals(2048, p.mtuBytes());
        }
    }
}
