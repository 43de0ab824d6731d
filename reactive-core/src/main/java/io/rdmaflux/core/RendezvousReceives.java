package io.rdmaflux.core;

/**
 * Receive-side state of the rendezvous messages of one connection, indexed by PSN within the reorder
 * window: RTS waiting for a message buffer, or granted (CTS sent) and counting FINs, one per
 * subchannel that carried a stripe (seed 000 &sect;5.3). Arrays only.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RendezvousReceives {
    static final int NONE = 0;
    static final int PENDING = 1;
    static final int GRANTED = 2;

    final int[] state;
    final int[] psn;
    final int[] rail;
    final int[] length;
    final int[] slot;
    final int[] fins;
    final int[] stripes;
    final long[] bytes;
    private final int mask;
    int pending;
    int granted;

    RendezvousReceives(int window) {
        int cap = Integer.highestOneBit(Math.max(2, window));
        if (cap < window) {
            cap <<= 1;
        }
        mask = cap - 1;
        state = new int[cap];
        psn = new int[cap];
        rail = new int[cap];
        length = new int[cap];
        slot = new int[cap];
        fins = new int[cap];
        stripes = new int[cap];
        bytes = new long[cap];
    }

    int index(int messagePsn) {
        return messagePsn & mask;
    }

    /** Whether {@code messagePsn} has an entry (pending or granted). */
    boolean has(int messagePsn) {
        int i = messagePsn & mask;
        return state[i] != NONE && psn[i] == messagePsn;
    }

    void addPending(int messagePsn, int messageRail, int messageLength) {
        int i = messagePsn & mask;
        state[i] = PENDING;
        psn[i] = messagePsn;
        rail[i] = messageRail;
        length[i] = messageLength;
        slot[i] = -1;
        fins[i] = 0;
        stripes[i] = 0;
        bytes[i] = 0;
        pending++;
    }

    void grant(int i, int bufferSlot) {
        state[i] = GRANTED;
        slot[i] = bufferSlot;
        pending--;
        granted++;
    }

    void remove(int i) {
        if (state[i] == PENDING) {
            pending--;
        } else if (state[i] == GRANTED) {
            granted--;
        }
        state[i] = NONE;
    }

    /** Forgets every entry; calls {@code releaseSlot} with the buffer slot of each granted one. */
    void clear(java.util.function.IntConsumer releaseSlot) {
        for (int i = 0; i < state.length; i++) {
            if (state[i] == GRANTED) {
                releaseSlot.accept(slot[i]);
            }
            state[i] = NONE;
        }
        pending = 0;
        granted = 0;
    }
}
