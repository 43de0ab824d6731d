package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.DeviceCapabilities;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a provider built on the soft NIC over its own transport (the ucx provider) sets on the builder:
 * its name, narrower capabilities (UD and SRQ refused), a floor under QP transport timeouts.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftProviderNarrowingTest {
    private static final DeviceCapabilities RC_ONLY = new DeviceCapabilities(16, 1024, 4, 1024, 1 << 20, 1 << 20, 64, false, false, true);

    @Test
    void aNarrowedProviderReportsItsNameAndCapabilitiesAndRefusesUdAndSrq() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, RailConfig.UNSHAPED, b -> b.providerName("rc-only").capabilities(RC_ONLY))) {
            SoftProvider p = nodes.a();
            assertEquals("rc-only", p.name());
            Device d = p.devices().get(0);
            assertEquals(RC_ONLY, d.capabilities());
            ProtectionDomain pd = d.allocateProtectionDomain();
            CompletionQueue cq = d.createCompletionQueue(8);
            VerbsException ud = assertThrows(VerbsException.class,
                () -> pd.createQueuePair(QpInitAttributes.builder(QpType.UD, d.port(1)).cq(cq).build()));
            assertTrue(ud.getMessage().contains("'rc-only'") && ud.getMessage().contains("unreliableDatagram=false"), ud.getMessage());
            VerbsException srq = assertThrows(VerbsException.class, () -> pd.createSharedReceiveQueue(4));
            assertTrue(srq.getMessage().contains("sharedReceiveQueue=false"), srq.getMessage());
            VerbsException inline = assertThrows(VerbsException.class,
                () -> pd.createQueuePair(QpInitAttributes.builder(QpType.RC, d.port(1)).cq(cq).maxInlineBytes(65).build()));
            assertTrue(inline.getMessage().contains("65") && inline.getMessage().contains("64"), inline.getMessage());
            QueuePair qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, d.port(1)).cq(cq).build());
            QueuePair peer = nodes.b().devices().get(0).allocateProtectionDomain().createQueuePair(
                QpInitAttributes.builder(QpType.RC, nodes.b().devices().get(0).port(1)).cq(nodes.b().devices().get(0).createCompletionQueue(8)).build());
            SoftTwoNodes.connectRc(qp, peer);
            MemoryRegion result = pd.allocateMemory(8, Access.LOCAL_WRITE);
            VerbsException atomics = assertThrows(VerbsException.class,
                () -> qp.postSend(new SendWorkRequest().fetchAndAdd(0, 1, 1, result, 0)));
            assertTrue(atomics.getMessage().contains("'rc-only'") && atomics.getMessage().contains("atomics=false"), atomics.getMessage());
        }
    }

    @Test
    void badBuilderValuesAreNamed() {
        SoftProvider.Builder b = SoftProvider.builder();
        assertTrue(assertThrows(VerbsException.class, () -> b.providerName(" ")).getMessage().contains("providerName"));
        assertTrue(assertThrows(VerbsException.class, () -> b.minRetryTimeoutNs(-1)).getMessage().contains("-1"));
        DeviceCapabilities tooBig = new DeviceCapabilities(16, 64, 4, 1024, 1 << 20, 1L << 40, 64, false, false, true);
        VerbsException e = assertThrows(VerbsException.class, () -> b.capabilities(tooBig));
        assertTrue(e.getMessage().contains("exceed"), e.getMessage());
    }

    @Test
    void theTransportTimeoutFloorDelaysRetryExceededInVirtualTime() {
        long floorNs = 1_000_000;
        try (SoftTwoNodes nodes = SoftTwoNodes.create(1, RailConfig.UNSHAPED, b -> b.minRetryTimeoutNs(floorNs))) {
            Device da = nodes.a().devices().get(0);
            Device db = nodes.b().devices().get(0);
            CompletionQueue ca = da.createCompletionQueue(8);
            CompletionQueue cb = db.createCompletionQueue(8);
            ProtectionDomain pa = da.allocateProtectionDomain();
            QueuePair qa = pa.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).retryCount(2).retryTimeoutNs(10_000).build());
            QueuePair qb = db.allocateProtectionDomain().createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            qb.toError();
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            long start = nodes.clock().nanoTime();
            assertTrue(qa.postSend(new SendWorkRequest().wrId(1).sge(src, 0, 64)));
            List<WorkCompletion> wcs = new ArrayList<>();
            for (int i = 0; i < 100_000 && wcs.isEmpty(); i++) {
                if (nodes.progress() == 0) {
                    nodes.clock().advance(1_000);
                }
                ca.poll(1, wc -> wcs.add(wc.copy()));
            }
            assertEquals(WcStatus.RETRY_EXC_ERR, wcs.get(0).status(), wcs::toString);
            long tookNs = nodes.clock().nanoTime() - start;
            assertTrue(tookNs >= 3 * floorNs, "3 timeouts of the 1 ms floor, not of the QP's 10 us, but it took " + tookNs + " ns");
            assertTrue(wcs.get(0).detail().contains(String.valueOf(floorNs)), wcs.get(0)::detail);
        }
    }
}
