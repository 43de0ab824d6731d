package io.rdmaflux.verbs.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.testing.NoLeaksExtension;
import io.rdmaflux.verbs.testing.SoftTwoNodes;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link SoftProvider#transmitPosted}: the work requests posted since the last pass go on the wire at once,
 * without a pass (no poll of arrivals, no timers), so a node can hand its provider what it posted at the end
 * of a duty cycle. Only for the thread that drives an INVOKER provider; a provider with its own thread
 * transmits there and the call does nothing.
 */
@ExtendWith(NoLeaksExtension.class)
class SoftTransmitPostedTest {

    @Test
    void aPostedSendIsTransmittedWithoutAPassOfTheSender() {
        try (SoftTwoNodes nodes = SoftTwoNodes.create()) {
            ProtectionDomain pa = nodes.a().devices().get(0).allocateProtectionDomain();
            ProtectionDomain pb = nodes.b().devices().get(0).allocateProtectionDomain();
            CompletionQueue ca = nodes.a().devices().get(0).createCompletionQueue(16);
            CompletionQueue cb = nodes.b().devices().get(0).createCompletionQueue(16);
            QueuePair qa = pa.createQueuePair(SoftTwoNodes.rc(nodes.a(), ca).build());
            QueuePair qb = pb.createQueuePair(SoftTwoNodes.rc(nodes.b(), cb).build());
            SoftTwoNodes.connectRc(qa, qb);
            MemoryRegion src = pa.allocateMemory(64, Access.LOCAL_WRITE);
            MemoryRegion dst = pb.allocateMemory(64, Access.LOCAL_WRITE);
            src.buffer().putLong(0, 0x5eed_cafeL);
            assertTrue(qb.postReceive(new ReceiveWorkRequest().wrId(7).sge(dst, 0, 64)));
            for (int i = 0; i < 3; i++) {
                nodes.progress();
            }

            assertEquals(0, nodes.a().transmitPosted(nodes.clock().nanoTime()), "nothing posted yet");
            assertTrue(qa.postSend(new SendWorkRequest().opcode(WrOpcode.SEND).wrId(1).sge(src, 0, 64).signaled(true)));
            assertEquals(1, nodes.a().transmitPosted(nodes.clock().nanoTime()), "the posted SEND");
            assertEquals(0, nodes.a().transmitPosted(nodes.clock().nanoTime()), "transmitted once");

            // only the receiver's passes from here: the SEND is already on the fabric
            List<WorkCompletion> got = new ArrayList<>();
            for (int i = 0; i < 4 && got.isEmpty(); i++) {
                nodes.b().progress(nodes.clock().nanoTime());
                cb.poll(4, wc -> got.add(wc.copy()));
            }
            assertEquals(1, got.size(), "the receive completed without a pass of the sender");
            assertEquals(WcOpcode.RECV, got.get(0).opcode());
            assertEquals(0x5eed_cafeL, dst.buffer().getLong(0));
            // the sender's next pass takes the ACK: the SEND completes as usual
            List<WorkCompletion> sent = nodes.awaitCompletions(ca, 1);
            assertEquals(1L, sent.get(0).wrId());
            qa.close();
            qb.close();
            src.close();
            dst.close();
            ca.close();
            cb.close();
            pa.close();
            pb.close();
        }
    }

    @Test
    void aProviderWithItsOwnThreadTransmitsThereAndTheCallDoesNothing() {
        try (SoftProvider p = SoftProvider.builder().name("own-thread").threadingMode(ThreadingMode.DEDICATED).build()) {
            assertEquals(0, p.transmitPosted(System.nanoTime()));
        }
    }
}
