package io.rdmaflux.ud;

import io.rdmaflux.ud.dr.DrDatagram;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

import java.nio.ByteBuffer;

/**
 * The registered datagram slots of a {@link DatagramRail}: a receive region of equal slots, each posted to the rail's
 * receiving queue pair and re-posted as soon as its datagram was handed on (seed 003 &sect;4.1), and a send region
 * whose free slots are kept on a stack, each remembering which DR queue pair's datagram it carries, its PSN and
 * whether it is DATA (whose send completion is DR's local completion, &sect;4.2). Work request ids: a receive's is its
 * slot, a send's {@link #SEND_BIT} | slot.
 *
 * <p><b>Concurrency:</b> the progress thread of the node, as its rail; not thread-safe.
 */
final class DatagramSlots {
    /** Marks a send work request's id. */
    static final long SEND_BIT = 1L << 40;

    final int slotBytes;
    private final MemoryRegion recvMemory;
    private final MemoryRegion sendMemory;
    /** The receive region: slot {@code i} at {@code i * slotBytes}. */
    final UnsafeBuffer recvView;
    private final UnsafeBuffer sendView;
    private final int[] freeSend;
    private int freeSendCount;
    private final @Nullable ReliableDatagramQp[] sendOwner;
    private final int[] sendPsn;
    private final boolean[] sendIsData;
    private final ReceiveWorkRequest rwr = new ReceiveWorkRequest();

    /**
     * Allocates {@code receiveSlots} and {@code sendSlots} slots of {@code slotBytes} in {@code pd}.
     *
     * @throws io.rdmaflux.verbs.VerbsException if the device refuses the memory (nothing is left allocated)
     */
    DatagramSlots(ProtectionDomain pd, int receiveSlots, int sendSlots, int slotBytes) {
        this.slotBytes = slotBytes;
        MemoryRegion rm = pd.allocateMemory((long) receiveSlots * slotBytes, Access.LOCAL_WRITE);
        MemoryRegion sm;
        try {
            sm = pd.allocateMemory((long) sendSlots * slotBytes, Access.LOCAL_WRITE);
        } catch (RuntimeException e) {
            rm.close();
            throw e;
        }
        this.recvMemory = rm;
        this.sendMemory = sm;
        this.recvView = view(rm, receiveSlots * slotBytes);
        this.sendView = new UnsafeBuffer(sm.address(), sendSlots * slotBytes);
        this.freeSend = new int[sendSlots];
        for (int i = 0; i < sendSlots; i++) {
            freeSend[i] = sendSlots - 1 - i;
        }
        this.freeSendCount = sendSlots;
        this.sendOwner = new ReliableDatagramQp[sendSlots];
        this.sendPsn = new int[sendSlots];
        this.sendIsData = new boolean[sendSlots];
    }

    /**
     * A view of {@code length} bytes of {@code region}, over its direct {@code ByteBuffer} where it has one at the same
     * address, so that DR's CRC32C of a received datagram reads the memory in place ({@code CRC32C.update(ByteBuffer)})
     * instead of copying it to an array first; over the bare address otherwise.
     */
    static UnsafeBuffer view(MemoryRegion region, int length) {
        ByteBuffer b = region.buffer();
        if (b.isDirect() && b.capacity() >= length && BufferUtil.address(b) == region.address()) {
            return new UnsafeBuffer(b, 0, length);
        }
        return new UnsafeBuffer(region.address(), length);
    }

    /** Posts receive slot {@code slot} to {@code qp}. */
    void postReceive(QueuePair qp, int slot) {
        rwr.wrId(slot).sge(recvMemory.address() + (long) slot * slotBytes, slotBytes, recvMemory.lkey());
        qp.postReceive(rwr);
    }

    /** Free send slots now. */
    int freeSendSlots() {
        return freeSendCount;
    }

    /**
     * Takes a free send slot and copies {@code length} bytes of {@code datagram} into it at {@code offset} (what goes
     * before them, such as a tag, the caller writes into {@link #sendRegion()}); remembers {@code owner} and {@code psn}.
     *
     * @return the slot, or -1 when none is free
     */
    int takeSend(int offset, byte[] datagram, int length, @Nullable ReliableDatagramQp owner, int psn) {
        if (freeSendCount == 0) {
            return -1;
        }
        int slot = freeSend[--freeSendCount];
        sendView.putBytes(slot * slotBytes + offset, datagram, 0, length);
        sendOwner[slot] = owner;
        sendPsn[slot] = psn;
        sendIsData[slot] = length > 4 && datagram[4] == DrDatagram.DATA;
        return slot;
    }

    /** The send region (slot {@code i} at {@code i * slotBytes}), for the bytes in front of a slot's datagram. */
    UnsafeBuffer sendRegion() {
        return sendView;
    }

    /** The address of send slot {@code slot}. */
    long sendAddress(int slot) {
        return sendMemory.address() + (long) slot * slotBytes;
    }

    int sendLkey() {
        return sendMemory.lkey();
    }

    /** Gives back a slot taken but not posted. */
    void untake(int slot) {
        sendOwner[slot] = null;
        freeSend[freeSendCount++] = slot;
    }

    /**
     * The send of {@code slot} completed: the slot is free again. On success, a DATA datagram's owner hears its local
     * completion.
     *
     * @return the slot's owner (null if it left), for the caller's handling of a failed send
     */
    @Nullable ReliableDatagramQp completeSend(int slot, boolean success) {
        ReliableDatagramQp owner = sendOwner[slot];
        sendOwner[slot] = null;
        freeSend[freeSendCount++] = slot;
        if (success && owner != null && sendIsData[slot]) {
            owner.onLocalCompletion(sendPsn[slot]);
        }
        return owner;
    }

    /** Whether a datagram of {@code qp} is still in a send slot (posted, its send not completed). */
    boolean inFlightFor(ReliableDatagramQp qp) {
        for (ReliableDatagramQp o : sendOwner) {
            if (o == qp) {
                return true;
            }
        }
        return false;
    }

    /** Forgets {@code qp} as the owner of the slots it has in flight (it closed: their completions tell no one). */
    void forget(int qpNumber) {
        for (int i = 0; i < sendOwner.length; i++) {
            ReliableDatagramQp o = sendOwner[i];
            if (o != null && o.qpNumber() == qpNumber) {
                sendOwner[i] = null;
            }
        }
    }

    /** Deregisters both regions. */
    void close() {
        sendMemory.close();
        recvMemory.close();
    }
}
