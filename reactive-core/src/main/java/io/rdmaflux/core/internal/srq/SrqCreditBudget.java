package io.rdmaflux.core.internal.srq;

/**
 * The DATA buffers of one shared receive pool, lent to connections as buffer credits by their
 * subscribers' demand (seed 003 &sect;2.1: one SRQ serves every connection; &sect;1.1: credits keep
 * the shared pool from being overrun). A pure state machine: values in, values out, no clock.
 *
 * <h2>Fairness rule</h2>
 * A connection is <em>active</em> while it wants credit (its subscriber has demand it holds no credit
 * for) or holds buffers (credits granted and not yet used, or messages not yet released). With
 * {@code B} DATA buffers and {@code A} active connections, a connection may hold at most its
 * <em>share</em> {@code max(1, B / A)}; a grant takes free buffers only. So
 * <ul>
 *   <li>no overcommit: buffers held by all connections never exceed {@code B}, so every credit has a
 *       posted buffer behind it;</li>
 *   <li>no peer starves another: once the others' holdings above the new share come back (credits used,
 *       messages released), every active connection that wants credit gets up to its share;</li>
 *   <li>a slow subscriber only slows its own sender: it holds at most the share it had when granted,
 *       and buffers it holds count against its own share, not anyone else's.</li>
 * </ul>
 * Deviation from seed 003, which grants an SRQ's buffers first come first served: that lets one fast peer
 * with a slow subscriber hold the whole pool.
 *
 * <p><b>Concurrency:</b> thread-safe (synchronized): the connections of a node share it; the progress
 * thread does nearly all the work.
 */
public final class SrqCreditBudget {
    /** One connection's (one rail's) account. */
    public static final class Account {
        private int held;
        private boolean wanting;
        private boolean closed;
        /** Run when buffers come back while this account waits for some ({@link #onRoom}). */
        private volatile Runnable onRoom;

        /**
         * {@code hint} runs (on the releasing thread, under the budget's lock: it must be cheap and not block)
         * each time buffers come back while this account wants credit it could not get: the connections of a
         * node share the pool, and an idle connection is visited again only when signalled.
         */
        public void onRoom(Runnable hint) {
            this.onRoom = hint;
        }

        /** Buffers this account holds now (credits outstanding plus messages not released). */
        public synchronized int held() {
            return held;
        }
    }

    private final int buffers;
    private int held;
    private int active;
    private int accounts;
    /** Accounts that want credit they could not get (told when buffers come back). */
    private final java.util.Set<Account> waiting = new java.util.LinkedHashSet<>();

    /** @param buffers DATA buffers of the pool, &gt; 0 */
    public SrqCreditBudget(int buffers) {
        if (buffers <= 0) {
            throw new IllegalArgumentException("buffers > 0 required but it was " + buffers);
        }
        this.buffers = buffers;
    }

    public synchronized Account open() {
        accounts++;
        return new Account();
    }

    /**
     * Takes up to {@code want} buffers for {@code a}: what its share and the free buffers allow.
     *
     * @param want buffers the account's demand asks for beyond what it holds, &ge; 0
     * @return buffers granted, in [0, want]
     */
    public synchronized int reserve(Account a, int want) {
        if (want < 0) {
            throw new IllegalArgumentException("want >= 0 required but it was " + want);
        }
        if (a.closed) {
            return 0;
        }
        boolean was = isActive(a);
        int n = 0;
        if (want > 0) {
            // the asking connection counts as active in its own share
            int shareNow = Math.max(1, buffers / Math.max(1, active + (was ? 0 : 1)));
            n = Math.max(0, Math.min(want, Math.min(shareNow - a.held, buffers - held)));
            a.held += n;
            held += n;
        }
        // still waiting for buffers: it stays active, which lowers the others' share until it is served
        a.wanting = n < want;
        if (a.wanting) {
            waiting.add(a);
        } else {
            waiting.remove(a);
        }
        boolean now = isActive(a);
        if (now && !was) {
            active++;
        } else if (!now && was) {
            active--;
        }
        return n;
    }

    /** {@code n} buffers of {@code a} came back (its messages released, or its credits given up). */
    public synchronized void release(Account a, int n) {
        if (n < 0 || n > a.held) {
            throw new IllegalArgumentException("release of n in [0, " + a.held + "] required but it was " + n);
        }
        boolean wasActive = isActive(a);
        a.held -= n;
        held -= n;
        if (wasActive && !isActive(a)) {
            active--;
        }
        if (n > 0 && !waiting.isEmpty()) {
            for (Account w : waiting) {
                Runnable r = w.onRoom;
                if (r != null && w != a) {
                    r.run();
                }
            }
        }
    }

    /** The account is gone: whatever it holds comes back. Idempotent. */
    public synchronized void close(Account a) {
        if (a.closed) {
            return;
        }
        release(a, a.held);
        if (a.wanting) {
            a.wanting = false;
            active--;
        }
        waiting.remove(a);
        a.closed = true;
        accounts--;
    }

    /** The most buffers one active connection may hold now: {@code max(1, B / active)}. */
    public synchronized int share() {
        return Math.max(1, buffers / Math.max(1, active));
    }

    public synchronized int held() {
        return held;
    }

    public synchronized int active() {
        return active;
    }

    public synchronized int accounts() {
        return accounts;
    }

    public int buffers() {
        return buffers;
    }

    private static boolean isActive(Account a) {
        return a.held > 0 || a.wanting;
    }

    @Override
    public synchronized String toString() {
        return "SrqCreditBudget{buffers=" + buffers + ", held=" + held + ", active=" + active + ", accounts=" + accounts + "}";
    }
}
