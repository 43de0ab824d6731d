package io.rdmaflux.core;

import java.util.Arrays;

/**
 * Send-side state of the rendezvous messages of one connection, a bounded number of entries (each
 * holding a staging slot of the node's send {@code MessageBufferPool}, or a message in memory the
 * application registered): the RTS sent, the
 * CTS received, the stripe split chosen and which stripes are posted and completed. Arrays only: a
 * large message allocates nothing. The completion filter of seed 000 &sect;4.1/&sect;5.3 counts
 * stripe completions here and reports the message once all completed.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class RendezvousSends {
    static final int FREE = 0;
    static final int RTS_SENT = 1;
    static final int POSTING = 2;
    static final int POSTED = 3;
    /** The RTS, CTS or a stripe was on a rail that failed: the RTS goes again (same PSN) on a live rail. */
    static final int RESEND = 4;

    /** Token flag of a stripe's FIN: {@code STRIPE | entry << 8 | stripe index}; stripe i is the one stripe() gave rail i. */
    static final long STRIPE = 1L << 40;

    final int[] state;
    final int[] stagingSlot;
    final long[] localAddress;
    final int[] lkey;
    final RdmaMessage[] retained;
    final int[] psn;
    final int[] length;
    final int[] rtsRail;
    final long[] remoteAddress;
    final int[] rkey;
    final int[] stripes;
    final int[] stripesLeft;
    final long[] postedMask;
    final long[] completedMask;
    final boolean[] hasSplit;
    final int[][] carrier;
    final long[][] stripeBytes;
    final long[][] stripeOffset;
    final long[][] postedNs;
    private int inUse;
    private int posting;

    RendezvousSends(int entries, int rails) {
        int n = Math.max(1, entries);
        state = new int[n];
        stagingSlot = new int[n];
        localAddress = new long[n];
        lkey = new int[n];
        retained = new RdmaMessage[n];
        psn = new int[n];
        length = new int[n];
        rtsRail = new int[n];
        remoteAddress = new long[n];
        rkey = new int[n];
        stripes = new int[n];
        stripesLeft = new int[n];
        postedMask = new long[n];
        completedMask = new long[n];
        hasSplit = new boolean[n];
        carrier = new int[n][rails];
        stripeBytes = new long[n][rails];
        stripeOffset = new long[n][rails];
        postedNs = new long[n][rails];
    }

    static long stripeToken(int entry, int rail) {
        return STRIPE | ((long) entry << 8) | rail;
    }

    static boolean isStripe(long token) {
        return token >= 0 && (token & STRIPE) != 0;
    }

    static int entryOf(long token) {
        return (int) ((token & ~STRIPE) >>> 8);
    }

    static int railOf(long token) {
        return (int) (token & 0xFF);
    }

    /** A free entry, or -1 when as many rendezvous messages as entries are in progress. */
    int freeEntry() {
        if (inUse == state.length) {
            return -1;
        }
        for (int e = 0; e < state.length; e++) {
            if (state[e] == FREE) {
                return e;
            }
        }
        return -1;
    }

    /**
     * @param slot    the staging slot holding the bytes, or -1 when they are in application-registered memory
     * @param message kept until the message completed when the bytes are the application's, else null
     */
    void source(int entry, int slot, long address, int key, @org.jspecify.annotations.Nullable RdmaMessage message) {
        stagingSlot[entry] = slot;
        localAddress[entry] = address;
        lkey[entry] = key;
        retained[entry] = message;
    }

    /** Releases what the entry holds (staging slot via {@code releaseSlot}, retained message). */
    void releaseSource(int entry, java.util.function.IntConsumer releaseSlot) {
        if (stagingSlot[entry] >= 0) {
            releaseSlot.accept(stagingSlot[entry]);
            stagingSlot[entry] = -1;
        }
        RdmaMessage m = retained[entry];
        if (m != null) {
            retained[entry] = null;
            m.release();
        }
    }

    void start(int entry, int messagePsn, int messageLength, int rail) {
        state[entry] = RTS_SENT;
        psn[entry] = messagePsn;
        length[entry] = messageLength;
        rtsRail[entry] = rail;
        postedMask[entry] = 0;
        completedMask[entry] = 0;
        hasSplit[entry] = false;
        Arrays.fill(stripeBytes[entry], 0);
        inUse++;
    }

    /** The entry waiting for the CTS of {@code messagePsn}, or -1. */
    int awaitingCts(int messagePsn) {
        for (int e = 0; e < state.length; e++) {
            if (state[e] == RTS_SENT && psn[e] == messagePsn) {
                return e;
            }
        }
        return -1;
    }

    void queueForPosting(int entry) {
        setState(entry, POSTING);
    }

    /** The entry with the lowest PSN (relative to {@code nextPsn}) whose stripes are not all posted, or -1. */
    int nextToPost(int nextPsn) {
        if (posting == 0) {
            return -1;
        }
        int best = -1;
        for (int e = 0; e < state.length; e++) {
            if (state[e] == POSTING && (best < 0 || psn[e] - nextPsn < psn[best] - nextPsn)) {
                best = e;
            }
        }
        return best;
    }

    void setState(int entry, int s) {
        if (state[entry] == POSTING) {
            posting--;
        }
        if (s == POSTING) {
            posting++;
        }
        state[entry] = s;
    }

    /** The entry of {@code messagePsn} in state {@code s}, or -1. */
    int find(int messagePsn, int s) {
        for (int e = 0; e < state.length; e++) {
            if (state[e] == s && psn[e] == messagePsn) {
                return e;
            }
        }
        return -1;
    }

    void finish(int entry) {
        setState(entry, FREE);
        inUse--;
    }

    int inUse() {
        return inUse;
    }

    /** Forgets every entry (the connection terminated); calls {@code release} with each entry in use. */
    void clear(java.util.function.IntConsumer release) {
        for (int e = 0; e < state.length; e++) {
            if (state[e] != FREE) {
                state[e] = FREE;
                release.accept(e);
            }
        }
        inUse = 0;
        posting = 0;
    }
}
