package io.rdmaflux.core;

import io.rdmaflux.core.internal.regcache.CacheEntry;
import org.jspecify.annotations.Nullable;

/**
 * Send-side state of the rendezvous messages of one connection, a bounded number of entries (each
 * holding a staging slot of the node's send {@code MessageBufferPool}, or a message sent by reference
 * from application memory, with the registration cache's entry it pins): whether it goes by READ, the RTS sent, the CTS received (the receiver's buffer), whether the message
 * was split. Arrays only: a large message allocates nothing. Its stripes (split, posted, carrier rail,
 * completed) are accounted in the connection's {@link io.rdmaflux.core.stripe.StripeEngine} under the
 * same entry index, whose completion filter (seed 000 &sect;4.1/&sect;5.3) reports the message once.
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

    final int[] state;
    final int[] stagingSlot;
    final long[] localAddress;
    final int[] lkey;
    /** The rkey of the source memory, for the READ rendezvous (the receiver reads with it). */
    final int[] localRkey;
    /** The registration cache entry the message pins, or null. */
    final CacheEntry[] pinned;
    /** Whether the message goes by the READ rendezvous (RTS_READ ... READ_FIN) rather than WRITE. */
    final boolean[] read;
    final RdmaMessage[] retained;
    final int[] psn;
    final int[] length;
    final int[] rtsRail;
    final long[] remoteAddress;
    final int[] rkey;
    final boolean[] hasSplit;
    private int inUse;
    private int posting;

    RendezvousSends(int entries) {
        int n = Math.max(1, entries);
        state = new int[n];
        stagingSlot = new int[n];
        localAddress = new long[n];
        lkey = new int[n];
        localRkey = new int[n];
        pinned = new CacheEntry[n];
        read = new boolean[n];
        retained = new RdmaMessage[n];
        psn = new int[n];
        length = new int[n];
        rtsRail = new int[n];
        remoteAddress = new long[n];
        rkey = new int[n];
        hasSplit = new boolean[n];
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
    void source(int entry, int slot, long address, int key, int rkey, @Nullable CacheEntry cacheEntry, @Nullable RdmaMessage message) {
        stagingSlot[entry] = slot;
        localAddress[entry] = address;
        lkey[entry] = key;
        localRkey[entry] = rkey;
        pinned[entry] = cacheEntry;
        retained[entry] = message;
    }

    /** Releases what the entry holds (staging slot via {@code releaseSlot}, cache pin via {@code unpin}, retained message). */
    void releaseSource(int entry, java.util.function.IntConsumer releaseSlot, java.util.function.Consumer<CacheEntry> unpin) {
        if (stagingSlot[entry] >= 0) {
            releaseSlot.accept(stagingSlot[entry]);
            stagingSlot[entry] = -1;
        }
        CacheEntry c = pinned[entry];
        if (c != null) {
            pinned[entry] = null;
            unpin.accept(c);
        }
        RdmaMessage m = retained[entry];
        if (m != null) {
            retained[entry] = null;
            m.release();
        }
    }

    void start(int entry, int messagePsn, int messageLength, int rail, boolean byRead) {
        state[entry] = RTS_SENT;
        read[entry] = byRead;
        psn[entry] = messagePsn;
        length[entry] = messageLength;
        rtsRail[entry] = rail;
        hasSplit[entry] = false;
        inUse++;
    }

    /** The entry waiting for the CTS of {@code messagePsn}, or -1. */
    int awaitingCts(int messagePsn) {
        for (int e = 0; e < state.length; e++) {
            if (state[e] == RTS_SENT && psn[e] == messagePsn && !read[e]) {
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

    /** The READ entry of {@code messagePsn} waiting for its READ_FIN (its RTS_READ sent, or to be sent again), or -1. */
    int awaitingReadFin(int messagePsn) {
        for (int e = 0; e < state.length; e++) {
            if ((state[e] == RTS_SENT || state[e] == RESEND) && read[e] && psn[e] == messagePsn) {
                return e;
            }
        }
        return -1;
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
