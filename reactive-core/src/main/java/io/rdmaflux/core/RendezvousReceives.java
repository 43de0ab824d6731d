package io.rdmaflux.core;

/**
 * Receive-side state of the rendezvous messages of one connection, indexed by PSN within the reorder
 * window: RTS waiting for a message buffer, or granted (CTS sent) and counting FINs, one per
 * subchannel that carried a stripe (seed 000 &sect;5.3); or, for the READ rendezvous, RTS_READ waiting
 * for a buffer, or granted one and being read. Also the READ_FINs owed to the sender. Arrays only, each
 * starting with room for a few entries and doubling on demand up to the reorder window (most of many
 * peers never have a rendezvous message in progress).
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RendezvousReceives {
    static final int NONE = 0;
    static final int PENDING = 1;
    static final int GRANTED = 2;
    static final int MAX_FINS_OWED = 256;
    static final int MAX_DISCARDS_OWED = 64;
    /** Owed READ_FINs and discards a connection starts with room for (most owe none; they grow on demand). */
    static final int INITIAL_OWED = 4;
    /** Table entries a connection starts with (rendezvous messages in progress at once before it grows). */
    static final int INITIAL_ENTRIES = 4;

    int[] state;
    int[] psn;
    int[] rail;
    int[] length;
    int[] slot;
    int[] fins;
    int[] stripes;
    long[] bytes;
    long[] finMask;
    boolean[] ctsOwed;
    /** The entry came by RTS_READ: the receiver reads it from {@link #remoteAddress} with {@link #rkey}. */
    boolean[] read;
    long[] remoteAddress;
    int[] rkey;
    /** READ_FINs owed, a ring that doubles from {@link #INITIAL_OWED} up to {@link #MAX_FINS_OWED} entries. */
    private int[] finPsn = new int[INITIAL_OWED];
    private int[] finLength = new int[INITIAL_OWED];
    private int[] finRail = new int[INITIAL_OWED];
    private int[] finFlags = new int[INITIAL_OWED];
    private int finHead;
    /** READ_FINs owed to the sender (a read completed, a discarded RTS_READ, or a repeated one for a message here). */
    int finsOwed;
    /** Discarding CTSs owed, growing by doubling from {@link #INITIAL_OWED} up to {@link #MAX_DISCARDS_OWED}. */
    private int[] discardPsn = new int[INITIAL_OWED];
    private int[] discardLength = new int[INITIAL_OWED];
    private int[] discardRail = new int[INITIAL_OWED];
    int discards;
    int owed;
    /** Entries by PSN & mask: from {@link #INITIAL_ENTRIES}, doubled while a new PSN's entry is taken, up to the window. */
    private int mask;
    private final int maxMask;
    int pending;
    int granted;

    RendezvousReceives(int window) {
        int cap = Integer.highestOneBit(Math.max(2, window));
        if (cap < window) {
            cap <<= 1;
        }
        maxMask = cap - 1;
        allocate(Math.min(cap, INITIAL_ENTRIES));
    }

    private void allocate(int cap) {
        mask = cap - 1;
        state = new int[cap];
        psn = new int[cap];
        rail = new int[cap];
        length = new int[cap];
        slot = new int[cap];
        fins = new int[cap];
        stripes = new int[cap];
        bytes = new long[cap];
        finMask = new long[cap];
        ctsOwed = new boolean[cap];
        read = new boolean[cap];
        remoteAddress = new long[cap];
        rkey = new int[cap];
    }

    /**
     * Doubles the table: every entry moves to its PSN's index in the larger one (distinct there too).
     * Only from {@link #addPending}, so no caller holds an index across it.
     */
    private void grow() {
        int[] oState = state, oPsn = psn, oRail = rail, oLength = length, oSlot = slot, oFins = fins, oStripes = stripes, oRkey = rkey;
        long[] oBytes = bytes, oFinMask = finMask, oRemote = remoteAddress;
        boolean[] oCtsOwed = ctsOwed, oRead = read;
        allocate(oState.length * 2);
        for (int j = 0; j < oState.length; j++) {
            if (oState[j] == NONE) {
                continue;
            }
            int i = oPsn[j] & mask;
            state[i] = oState[j];
            psn[i] = oPsn[j];
            rail[i] = oRail[j];
            length[i] = oLength[j];
            slot[i] = oSlot[j];
            fins[i] = oFins[j];
            stripes[i] = oStripes[j];
            rkey[i] = oRkey[j];
            bytes[i] = oBytes[j];
            finMask[i] = oFinMask[j];
            remoteAddress[i] = oRemote[j];
            ctsOwed[i] = oCtsOwed[j];
            read[i] = oRead[j];
        }
    }

    /**
     * Remembers a READ_FIN owed to the sender.
     *
     * @return false if {@value #MAX_FINS_OWED} are owed already (a repeated RTS_READ is then ignored: the sender asks again
     *     after its next failover; the grant loop never owes more than the message buffers plus that)
     */
    boolean oweFin(int messagePsn, int messageLength, int messageRail, int flags) {
        if (finsOwed == finPsn.length) {
            if (finPsn.length == MAX_FINS_OWED) {
                return false;
            }
            growFins();
        }
        int k = (finHead + finsOwed) & (finPsn.length - 1);
        finPsn[k] = messagePsn;
        finLength[k] = messageLength;
        finRail[k] = messageRail;
        finFlags[k] = flags;
        finsOwed++;
        return true;
    }

    /** Doubles the full READ_FIN ring, its entries from the head first. */
    private void growFins() {
        int n = finPsn.length;
        finPsn = unwrap(finPsn, n);
        finLength = unwrap(finLength, n);
        finRail = unwrap(finRail, n);
        finFlags = unwrap(finFlags, n);
        finHead = 0;
    }

    private int[] unwrap(int[] ring, int n) {
        int[] grown = new int[n * 2];
        for (int k = 0; k < n; k++) {
            grown[k] = ring[(finHead + k) & (n - 1)];
        }
        return grown;
    }

    int nextFinPsn() {
        return finPsn[finHead];
    }

    int nextFinLength() {
        return finLength[finHead];
    }

    int nextFinRail() {
        return finRail[finHead];
    }

    int nextFinFlags() {
        return finFlags[finHead];
    }

    void finSent() {
        finHead = (finHead + 1) & (finPsn.length - 1);
        finsOwed--;
    }

    /** Work for the grant loop: RTSs waiting, CTSs to send again, discarding CTSs owed. */
    boolean hasWork() {
        return pending > 0 || owed > 0 || discards > 0 || finsOwed > 0;
    }

    /**
     * Remembers that a discarding CTS is owed for a duplicate RTS (its message already arrived).
     *
     * @return false if {@value #MAX_DISCARDS_OWED} are already owed (the RTS is then ignored; the sender asks again after its next failover)
     */
    boolean oweDiscard(int messagePsn, int messageLength, int messageRail) {
        if (discards == discardPsn.length) {
            if (discards == MAX_DISCARDS_OWED) {
                return false;
            }
            int n = discards * 2;
            discardPsn = java.util.Arrays.copyOf(discardPsn, n);
            discardLength = java.util.Arrays.copyOf(discardLength, n);
            discardRail = java.util.Arrays.copyOf(discardRail, n);
        }
        discardPsn[discards] = messagePsn;
        discardLength[discards] = messageLength;
        discardRail[discards] = messageRail;
        discards++;
        return true;
    }

    int discardPsn(int k) {
        return discardPsn[k];
    }

    int discardLength(int k) {
        return discardLength[k];
    }

    int discardRail(int k) {
        return discardRail[k];
    }

    /** Drops the first {@code n} owed discards. */
    void discardsSent(int n) {
        System.arraycopy(discardPsn, n, discardPsn, 0, discards - n);
        System.arraycopy(discardLength, n, discardLength, 0, discards - n);
        System.arraycopy(discardRail, n, discardRail, 0, discards - n);
        discards -= n;
    }

    void oweCts(int i) {
        if (!ctsOwed[i]) {
            ctsOwed[i] = true;
            owed++;
        }
    }

    void ctsSent(int i) {
        if (ctsOwed[i]) {
            ctsOwed[i] = false;
            owed--;
        }
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
        while (state[i] != NONE && mask != maxMask) {
            grow();
            i = messagePsn & mask;
        }
        state[i] = PENDING;
        psn[i] = messagePsn;
        rail[i] = messageRail;
        length[i] = messageLength;
        slot[i] = -1;
        fins[i] = 0;
        stripes[i] = 0;
        bytes[i] = 0;
        finMask[i] = 0;
        ctsOwed[i] = false;
        read[i] = false;
        pending++;
    }

    /** Entry {@code i} (just added) is read by this side from the sender's {@code [address, +length)} with {@code key}. */
    void readFrom(int i, long address, int key) {
        read[i] = true;
        remoteAddress[i] = address;
        rkey[i] = key;
    }

    void grant(int i, int bufferSlot) {
        state[i] = GRANTED;
        slot[i] = bufferSlot;
        pending--;
        granted++;
    }

    void remove(int i) {
        ctsSent(i);
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
            ctsOwed[i] = false;
        }
        pending = 0;
        granted = 0;
        owed = 0;
        discards = 0;
        finsOwed = 0;
        finHead = 0;
    }
}
