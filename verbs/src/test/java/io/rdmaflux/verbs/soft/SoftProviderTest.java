package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.VirtualClock;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(NoLeaksExtension.class)
class SoftProviderTest {

    private static boolean threadAlive(String name) {
        return Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().equals(name) && t.isAlive());
    }

    @Test
    void factoryOpensSoftByNameAndByAuto() {
        try (RdmaProvider p = RdmaProviders.open("soft", Map.of("threading", "invoker", "devices", "2", "ports", "3"))) {
            assertEquals("soft", p.name());
            assertEquals(2, p.devices().size());
            assertEquals(3, p.devices().get(0).ports().size());
            assertEquals(ThreadingMode.INVOKER, p.threadingMode());
        }
        try (RdmaProvider p = RdmaProviders.open(RdmaProviders.AUTO, Map.of("threading", "invoker"))) {
            assertEquals("soft", p.name());
        }
    }

    @Test
    void factoryRejectsBadOptionsNamingThem() {
        VerbsException e = assertThrows(VerbsException.class, () -> RdmaProviders.open("soft", Map.of("colour", "blue")));
        assertTrue(e.getMessage().contains("colour") && e.getMessage().contains("bandwidth"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> RdmaProviders.open("soft", Map.of("mtu", "1000")));
        assertTrue(e.getMessage().contains("1000"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> RdmaProviders.open("soft", Map.of("bandwidth", "0")));
        assertTrue(e.getMessage().contains("bandwidthBytesPerSec"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> RdmaProviders.open("soft", Map.of("latency", "-5")));
        assertTrue(e.getMessage().contains("-5"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> RdmaProviders.open("soft", Map.of("devices", "many")));
        assertTrue(e.getMessage().contains("many"), e.getMessage());
        e = assertThrows(VerbsException.class, () -> RdmaProviders.open("soft", Map.of("threading", "shared")));
        assertTrue(e.getMessage().contains("shared"), e.getMessage());
    }

    @Test
    void railConfigRejectsInvalidValues() {
        assertThrows(VerbsException.class, () -> RailConfig.builder().bandwidthBytesPerSec(-1).build());
        assertThrows(VerbsException.class, () -> RailConfig.builder().latencyNs(-1).build());
        for (int bad : new int[] {0, 128, 300, 8192}) {
            VerbsException e = assertThrows(VerbsException.class, () -> RailConfig.builder().mtuBytes(bad).build());
            assertTrue(e.getMessage().contains(String.valueOf(bad)), e.getMessage());
        }
        for (int ok : new int[] {256, 512, 1024, 2048, 4096}) {
            assertEquals(ok, RailConfig.builder().mtuBytes(ok).build().mtuBytes());
        }
        assertThrows(VerbsException.class, () -> RailConfig.builder().duplicateRate(1.5).build());
        assertThrows(VerbsException.class, () -> RailConfig.builder().corruptRate(-0.1).build());
        assertThrows(VerbsException.class, () -> RailConfig.builder().reorderRate(Double.NaN).build());
        assertThrows(VerbsException.class, () -> LossGenerator.random(2, 1));
        assertThrows(VerbsException.class, () -> LossGenerator.fixedGap(0));
        assertThrows(VerbsException.class, () -> LossGenerator.multiGap(3, 2, 4));
        assertThrows(VerbsException.class, () -> LossGenerator.burst(0.1, 0, 1));
    }

    @Test
    void dedicatedModeRunsOneNamedThreadThatStopsOnClose() {
        SoftFabric fabric = SoftFabric.mem("dedicated");
        SoftProvider p = SoftProvider.builder().name("ded1").fabric(fabric).devices(2).build();
        try {
            assertTrue(threadAlive("rdmaflux-soft-ded1"));
            assertThrows(VerbsException.class, () -> p.progress(0));
            Device da = p.devices().get(0);
            Device db = p.devices().get(1);
            ProtectionDomain pa = da.allocateProtectionDomain();
            ProtectionDomain pb = db.allocateProtectionDomain();
            CompletionQueue ca = da.createCompletionQueue(64);
            CompletionQueue cb = db.createCompletionQueue(64);
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
            QueuePair qb = pb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(64, Access.LOCAL_WRITE);
            src.buffer().put(0, (byte) 99);
            assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(1).sge(dst, 0, 64)));
            assertTrue(qa.postSend(new SendWorkRequest().wrId(2).sge(src, 0, 64)));
            List<WorkCompletion> got = new ArrayList<>();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (got.size() < 2 && System.nanoTime() < deadline) {
                ca.poll(1, wc -> got.add(wc.copy()));
                cb.poll(1, wc -> got.add(wc.copy()));
                Thread.onSpinWait();
            }
            assertEquals(2, got.size(), "the provider thread progressed the send");
            assertTrue(got.stream().allMatch(WorkCompletion::isSuccess), got::toString);
            assertEquals(99, dst.buffer().get(0));
        } finally {
            p.close();
        }
        assertFalse(threadAlive("rdmaflux-soft-ded1"), "thread stopped on close");
        assertEquals(null, p.lastError());
    }

    @Test
    void accountingFollowsRegistrationAndClosingTheProviderReleasesEverything() {
        SoftProvider p = SoftProvider.builder().fabric(SoftFabric.mem("acct")).threadingMode(ThreadingMode.INVOKER).build();
        int before = SoftResources.liveMemoryRegions();
        ProtectionDomain pd = p.devices().get(0).allocateProtectionDomain();
        MemoryRegion m1 = pd.allocateMemory(1000, Access.LOCAL_WRITE);
        pd.allocateMemory(24, Access.LOCAL_WRITE);
        pd.registerMemory(java.nio.ByteBuffer.allocateDirect(10), 0);
        assertEquals(3, p.liveMemoryRegions());
        assertEquals(1024, p.allocatedBytes());
        assertEquals(before + 3, SoftResources.liveMemoryRegions());
        m1.deregister();
        assertEquals(2, p.liveMemoryRegions());
        assertEquals(24, p.allocatedBytes());
        CompletionQueue cq = p.devices().get(0).createCompletionQueue(8);
        pd.createQueuePair(QpInitAttributes.builder(QpType.RC, p.devices().get(0).port(1)).cq(cq).build());
        p.close();
        p.close();
        assertEquals(0, p.liveMemoryRegions());
        assertEquals(0, p.allocatedBytes());
        assertThrows(VerbsException.class, () -> p.progress(0));
        assertThrows(VerbsException.class, () -> pd.allocateMemory(8, 0));
    }

    @Test
    void keysOfAReusedSlotDiffer() {
        try (SoftProvider p = SoftProvider.builder().fabric(SoftFabric.mem("keys")).threadingMode(ThreadingMode.INVOKER).build()) {
            ProtectionDomain pd = p.devices().get(0).allocateProtectionDomain();
            MemoryRegion m1 = pd.allocateMemory(8, Access.ALL);
            int l1 = m1.lkey();
            int r1 = m1.rkey();
            m1.deregister();
            MemoryRegion m2 = pd.allocateMemory(8, Access.ALL);
            assertTrue(m2.lkey() != l1 && m2.rkey() != r1, "a stale key must not name the new region");
            assertTrue(m2.lkey() != m2.rkey());
        }
    }

    @Test
    void virtualClockNeverGoesBackwards() {
        VirtualClock c = new VirtualClock(10);
        assertEquals(15, c.advance(5));
        assertThrows(IllegalArgumentException.class, () -> c.advance(-1));
        assertThrows(IllegalArgumentException.class, () -> c.set(14));
        c.set(100);
        assertEquals(100, c.nanoTime());
    }

    @Test
    void lossGeneratorsAreSeededAndReproducible() {
        LossGenerator gap = LossGenerator.fixedGap(4);
        List<Integer> dropped = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            if (gap.shouldDrop(0, 1)) {
                dropped.add(i);
            }
        }
        assertEquals(List.of(3, 7, 11), dropped);
        LossGenerator multi = LossGenerator.multiGap(1, 2, 5);
        dropped.clear();
        for (int i = 0; i < 10; i++) {
            if (multi.shouldDrop(0, 1)) {
                dropped.add(i);
            }
        }
        assertEquals(List.of(1, 2, 6, 7), dropped);
        for (LossGenerator g : List.of(LossGenerator.random(0.2, 7), LossGenerator.burst(0.05, 0.3, 7))) {
            LossGenerator twin = g.copy();
            int drops = 0;
            for (int i = 0; i < 10_000; i++) {
                boolean d = g.shouldDrop(i, 100);
                assertEquals(d, twin.shouldDrop(i, 100), "same seed, same decisions");
                drops += d ? 1 : 0;
            }
            assertTrue(drops > 1000 && drops < 3000, g + " dropped " + drops);
        }
    }
}
