package io.rdmaflux.ud;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;
import org.jspecify.annotations.Nullable;

/**
 * The completion side both datagram rails share: their datagrams go in registered {@link DatagramSlots}, one
 * completion queue reports sends and receives, a received slot is handed to its queue pair (which copies what it
 * keeps, or places it: {@link io.rdmaflux.ud.dr.MessagePlacement}) and re-posted at once (seed 003 &sect;4.1). What
 * differs &mdash; how a send failure counts, which queue pair a datagram is for &mdash; is the subclass's.
 *
 * <p><b>Concurrency:</b> {@link #poll} and the completions on the progress thread of the node.
 */
abstract class SlottedDatagramRail implements DatagramRail, CompletionSink {
    /** The time of the {@link #poll} being run, ns: what datagrams are handed on with. */
    protected long nowNs;
    protected boolean closed;

    abstract CompletionQueue completionQueue();

    abstract DatagramSlots slots();

    /** The queue pair the receive slots are posted to. */
    abstract QueuePair receiveQueuePair();

    /** The send in a slot of {@code from} (null: an ACK or probe of no queue pair, or forgotten) completed; its slot is free again. */
    abstract void onSendCompleted(@Nullable ReliableDatagramQp from, WorkCompletion wc);

    /** A datagram of {@code length} bytes arrived at {@code offset} of {@code slots}; its slot is re-posted on return. */
    abstract void onReceived(UnsafeBuffer slots, int offset, int length);

    @Override
    public final boolean sending(ReliableDatagramQp owner) {
        return slots().inFlightFor(owner);
    }

    @Override
    public final int poll(long nowNs) {
        if (closed) {
            return 0;
        }
        this.nowNs = nowNs;
        CompletionQueue cq = completionQueue();
        int total = 0;
        int n;
        while ((n = cq.poll(64, this)) > 0) {
            total += n;
        }
        return total;
    }

    @Override
    public final void onCompletion(WorkCompletion wc) {
        long id = wc.wrId();
        DatagramSlots s = slots();
        if ((id & DatagramSlots.SEND_BIT) != 0) {
            onSendCompleted(s.completeSend((int) (id & 0xFFFF_FFFFL), wc.isSuccess()), wc);
            return;
        }
        if (!wc.isSuccess()) {
            return; // flushed: the queue pair went to ERROR or closed
        }
        int slot = (int) id;
        onReceived(s.recvView, slot * s.slotBytes, wc.byteLength());
        s.postReceive(receiveQueuePair(), slot);
    }
}
