package io.rdmaflux.striping.connection;

/**
 * The order in which a connection's messages complete, for {@link MessageRailScheduler}'s metrics: a
 * message that completes while an earlier PSN is outstanding is an out-of-order completion (the
 * sender-side reordering striping causes), over every message, sent whole as DATA frames or by RDMA
 * WRITEs. The connection's stripe engine sees only the second kind, and {@code PsnOrder} hands out
 * PSNs itself, so this window follows the connection's PSNs instead. Per PSN it also keeps whether the
 * engine already counted the message on the rails that carried it ({@link #carried}), so that its
 * completion, reported later on the RTS's rail, does not count it again.
 *
 * <p>The window starts at the first PSN seen and grows (doubling) to cover the PSNs outstanding; after
 * that nothing is allocated.
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class CompletionOrder {
    /** The oldest PSN not completed; valid once {@link #headKnown}. */
    private int headPsn;
    private boolean headKnown;
    /** Per PSN slot: completed while an earlier one was outstanding. */
    private boolean[] completedAhead = new boolean[64];
    /** Per PSN slot: every WRITE of the message completed, counted by the engine's feedback. */
    private boolean[] carried = new boolean[64];

    /** Message {@code psn} was placed; the first one starts the window. */
    void sent(int psn) {
        start(psn);
    }

    /** Every WRITE of message {@code psn} completed and the message was counted per rail. */
    void carried(int psn) {
        start(psn);
        int ahead = psn - headPsn;
        if (ahead < 0) {
            return;
        }
        cover(ahead);
        carried[psn & (carried.length - 1)] = true;
    }

    /** Whether {@link #carried} was called for {@code psn} since it was placed; forgets it. */
    boolean takeCarried(int psn) {
        int ahead = headKnown ? psn - headPsn : -1;
        if (ahead < 0 || ahead >= carried.length) {
            return false;
        }
        int slot = psn & (carried.length - 1);
        boolean was = carried[slot];
        carried[slot] = false;
        return was;
    }

    /**
     * Message {@code psn} is no longer outstanding.
     *
     * @param completed completed (true) or discarded by the receiver (false)
     * @return whether it completed out of order (an earlier PSN is outstanding); false when discarded
     */
    boolean leave(int psn, boolean completed) {
        start(psn);
        int ahead = psn - headPsn;
        if (ahead < 0) {
            return false;
        }
        cover(ahead);
        int mask = completedAhead.length - 1;
        carried[psn & mask] = false;
        if (ahead > 0) {
            completedAhead[psn & mask] = true;
            return completed;
        }
        headPsn++;
        while (completedAhead[headPsn & mask]) {
            completedAhead[headPsn & mask] = false;
            headPsn++;
        }
        return false;
    }

    private void start(int psn) {
        if (!headKnown) {
            headKnown = true;
            headPsn = psn;
        }
    }

    private void cover(int ahead) {
        while (ahead >= completedAhead.length) {
            int n = completedAhead.length;
            boolean[] grownAhead = new boolean[n * 2];
            boolean[] grownCarried = new boolean[n * 2];
            for (int d = 0; d < n; d++) {
                grownAhead[(headPsn + d) & (2 * n - 1)] = completedAhead[(headPsn + d) & (n - 1)];
                grownCarried[(headPsn + d) & (2 * n - 1)] = carried[(headPsn + d) & (n - 1)];
            }
            completedAhead = grownAhead;
            carried = grownCarried;
        }
    }
}
