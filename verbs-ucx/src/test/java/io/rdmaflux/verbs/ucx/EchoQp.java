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
 * One RC queue pair with {@link #SLOTS} send and receive slots of {@link #MAX} bytes on device 0's
 * port 1, for the two-process echo test ({@link UcxEchoPeer} in the child, {@link UcxTwoProcessTest}
 * in the parent). A message in slot {@code i} is sent from and received into slot {@code i}
 * ({@code wrId = i}). Single thread.
 */
final class EchoQp implements AutoCloseable {
    /** Slots per direction: messages in flight. */
    static final int SLOTS = 32;
    static final int MAX = 262_144;
    /** The single-message sizes echoed first, bytes. */
    static final int[] SIZES = {64, 4096, MAX};
    /** Then windows of {@link #SLOTS} messages of {@link #BURST_BYTES}, this many. */
    static final int BURSTS = 24;
    static final int BURST_BYTES = 65_536;
    /** The queue pairs' transport timeout, ns (1 s; 7 retries). */
    static final long RETRY_TIMEOUT_NS = 1_000_000_000L;
    /** Messages the child echoes in all. */
    static final int MESSAGES = SIZES.length + BURSTS * SLOTS;

    final ProtectionDomain pd;
    final CompletionQueue cq;
    final QueuePair qp;
    final MemoryRegion send;
    final MemoryRegion receive;

    EchoQp(Device device) {
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(4 * SLOTS);
        // a window of 2 MiB over UCX tcp at ~30 MB/s on a loaded host takes ~70 ms to drain, and ACKs queue
        // behind it: a timeout below that retransmits into UCX's (reliable) queue and feeds on itself
        qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, device.port(1)).cq(cq).retryTimeoutNs(RETRY_TIMEOUT_NS).build());
        send = pd.allocateMemory((long) SLOTS * MAX, Access.LOCAL_WRITE);
        receive = pd.allocateMemory((long) SLOTS * MAX, Access.LOCAL_WRITE);
    }

    void postReceive(int slot) {
        if (!qp.postReceive(new ReceiveWorkRequest().wrId(slot).sge(receive, (long) slot * MAX, MAX))) {
            throw new IllegalStateException("receive queue full");
        }
    }

    void postSend(int slot, int length) {
        if (!qp.postSend(new SendWorkRequest().wrId(slot).sge(send, (long) slot * MAX, length))) {
            throw new IllegalStateException("send queue full");
        }
    }

    /** Completions now in the CQ (copies); a failed one throws with its status. */
    List<WorkCompletion> poll() {
        List<WorkCompletion> out = new ArrayList<>();
        cq.poll(64, wc -> out.add(wc.copy()));
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

    /** Message {@code n} of {@code length} bytes, different per message. */
    static byte[] pattern(int n, int length) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (i * 31 + n * 7 + length);
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
