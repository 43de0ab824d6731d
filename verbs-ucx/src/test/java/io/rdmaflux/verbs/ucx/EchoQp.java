package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.ArrayList;
import java.util.List;

/**
 * One RC queue pair with a send and a receive region on device 0's port 1, for the two-process echo
 * test ({@link UcxEchoPeer} in the child, {@link UcxTwoProcessTest} in the parent). Single thread.
 */
final class EchoQp implements AutoCloseable {
    /** The message sizes echoed, bytes. */
    static final int[] SIZES = {64, 4096, 262_144};
    static final int MAX = 262_144;

    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion send;
    final MemoryRegion receive;

    EchoQp(Device device) {
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(64);
        qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, device.port(1)).cq(cq).build());
        send = pd.allocateMemory(MAX, Access.LOCAL_WRITE);
        receive = pd.allocateMemory(MAX, Access.LOCAL_WRITE);
    }

    void postReceive() {
        if (!qp.postReceive(new ReceiveWorkRequest().wrId(1).sge(receive, 0, MAX))) {
            throw new IllegalStateException("receive queue full");
        }
    }

    void postSend(int length) {
        if (!qp.postSend(new SendWorkRequest().wrId(2).sge(send, 0, length))) {
            throw new IllegalStateException("send queue full");
        }
    }

    /** Completions now in the CQ (copies); a failed one throws with its status. */
    List<WorkCompletion> poll() {
        List<WorkCompletion> out = new ArrayList<>();
        cq.poll(16, wc -> out.add(wc.copy()));
        for (WorkCompletion wc : out) {
            if (!wc.isSuccess()) {
                throw new IllegalStateException("work completion failed: " + wc);
            }
        }
        return out;
    }

    static boolean isReceive(WorkCompletion wc) {
        return wc.opcode() == WcOpcode.RECV;
    }

    /** A message of {@code length} bytes, different per size. */
    static byte[] pattern(int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + length);
        }
        return b;
    }

    @Override
    public void close() {
        qp.close();
        send.deregister();
        receive.deregister();
        cq.close();
        pd.close();
    }
}
