package io.rdmaflux.core.stripe;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * The stripe engine of a virtual channel (seed 000 &sect;4.1, Fig. 2 and Fig. 4): plans each message
 * into stripes, accounts for every stripe while it is posted and completes, filters completions into
 * one per message, feeds the {@link StripePolicy}, and takes a failed rail's stripes back for a re-plan.
 * It posts nothing itself: its user posts each stripe its own way (an RDMA WRITE plus one FIN per rail
 * used, seed 000 &sect;5.3; a Reactor subchannel; a one-sided put or get, seed 002 &sect;3.2) and reports
 * the post and the completion here.
 *
 * <p><b>Entries and slots.</b> The engine holds a fixed number of message <i>entries</i>, indexed by
 * its user (a PSN ring, or a table of rendezvous sends). An entry's stripes live in <i>slots</i>: a
 * {@linkplain #split split} or {@linkplain #whole whole} plan puts the stripe for rail {@code r} in slot
 * {@code r}, so slot {@code r} is the stripe the policy gave rail {@code r}; a {@linkplain #resplit
 * re-plan} after a rail failure puts further pieces in free slots. At most {@value #MAX_SLOTS} slots per
 * entry. Each slot has its bytes and offset in the message (contiguous, in plan order), the rail that
 * carries it once posted (not necessarily its planned rail after a failover) and the post time.
 *
 * <p><b>Completion filter.</b> {@link #complete} reports a stripe's completion to the policy with its
 * delivery time on its carrier rail (completion minus the later of its post and the previous
 * completion on that rail, {@link MessageTimings#deliveryTimeNs}), whether the rail was idle when it
 * was posted and what is still outstanding there; after an entry's last stripe it returns
 * {@link #MESSAGE} once, and a split message's {@link MessageTimings} go to
 * {@link StripePolicy#onMessageCompleted} (seed 000 &sect;4.5). Release in PSN order, where a user
 * wants it, is {@link PsnOrder}.
 *
 * <p><b>Per rail</b> the engine keeps the bytes and stripes posted and not completed (a rail's backlog,
 * for common-finish splits and commit horizons) and its last completion time. What counts, for every
 * user alike:
 * <ul>
 *   <li><i>Idle at post</i>: nothing of the engine was outstanding on the carrier rail when the stripe
 *       was posted. On a rail that completes in post order (an RC send queue), with posts and
 *       completions handled in time order, this is the same as "the previous completion on the rail
 *       came at or before the post"; it differs only when a completion and a post carry the same clock
 *       reading and the post was handled first, and then the stripe did queue behind the other.</li>
 *   <li><i>Outstanding</i> and <i>backlog</i> count on the rail that carries a stripe (after a failover
 *       not the rail it was planned for): that is the queue the stripe waits in.</li>
 *   <li>{@link StripePolicy#onStripePosted} comes when a stripe is posted, not when it is planned: a
 *       rail's busy time starts then (seed 004 &sect;II-B).</li>
 *   <li>Whole messages ({@link #whole}) count like stripes: an RDMA WRITE of a whole message holds its
 *       queue pair as long as a stripe of the same size.</li>
 * </ul>
 *
 * <p><b>Memory:</b> after the first use of an entry nothing is allocated per message or stripe; a
 * re-plan after a rail failure may grow an entry's slot arrays once.
 *
 * <p><b>Errors:</b> a policy split that gives a negative count, bytes to a rail outside the usable
 * mask, or a sum other than the length throws {@link IllegalStateException} naming the policy, the
 * PSN and the split; bad indices throw {@link IndexOutOfBoundsException}.
 *
 * <p><b>Concurrency:</b> not thread-safe; one thread (a connection's progress thread, an operator's
 * drain loop) calls every method.
 */
public final class StripeEngine {
    /** Most stripes one entry may hold at a time (slot masks are a {@code long}). */
    public static final int MAX_SLOTS = 64;

    /** {@link #complete} result: a duplicate or late completion (slot empty or already completed); nothing changed. */
    public static final int IGNORED = -1;
    /** {@link #complete} result: the stripe completed, others of the message have not. */
    public static final int STRIPE = 0;
    /** {@link #complete} result: the message's last stripe completed. */
    public static final int MESSAGE = 1;

    private final int railCount;
    private final StripePolicy policy;
    private final long[] psn;
    private final long[] live;
    private final long[] posted;
    private final long[] completed;
    private final long[] idleAtPost;
    private final long[] completedOn;
    private final boolean[] striped;
    private long[][] offset;
    private long[][] bytes;
    private long[][] postedNs;
    private int[][] carrier;
    private final @Nullable RecordedMessageTimings[] timings;
    private final long[] backlogBytes;
    private final int[] outstanding;
    private final long[] lastCompletionNs;
    private final long[] split;
    private long usableRails;

    /**
     * @param railCount rails of the virtual channel, 1..64
     * @param entries   messages the engine can hold at once, {@code >= 1}
     * @param policy    the policy; its {@link StripePolicy#attach} is called with this engine, last
     * @throws IllegalArgumentException if a count is out of range
     * @throws IllegalStateException    if the policy refuses to be attached (it serves another engine)
     */
    public StripeEngine(int railCount, int entries, StripePolicy policy) {
        if (railCount < 1 || railCount > MAX_SLOTS) {
            throw new IllegalArgumentException("railCount in [1, 64] required but it was " + railCount);
        }
        if (entries < 1) {
            throw new IllegalArgumentException("entries >= 1 required but it was " + entries);
        }
        this.railCount = railCount;
        this.policy = policy;
        psn = new long[entries];
        live = new long[entries];
        posted = new long[entries];
        completed = new long[entries];
        idleAtPost = new long[entries];
        completedOn = new long[entries];
        striped = new boolean[entries];
        // an entry's slot rows and timings are made when it is first begun: a connection that never sends a
        // rendezvous message, or only one at a time, holds none or one of them (issue 15, memory per peer)
        offset = new long[entries][];
        bytes = new long[entries][];
        postedNs = new long[entries][];
        carrier = new int[entries][];
        timings = new RecordedMessageTimings[entries];
        backlogBytes = new long[railCount];
        outstanding = new int[railCount];
        lastCompletionNs = new long[railCount];
        split = new long[railCount];
        usableRails = railCount == MAX_SLOTS ? -1L : (1L << railCount) - 1;
        // last: the policy may read the engine from here on
        policy.attach(this);
    }

    // ---------------------------------------------------------------- plan

    /** Starts entry {@code entry} for message {@code messagePsn} of {@code lengthBytes}: no stripes yet. */
    public void begin(int entry, long messagePsn, long lengthBytes) {
        psn[entry] = messagePsn;
        live[entry] = 0;
        posted[entry] = 0;
        completed[entry] = 0;
        idleAtPost[entry] = 0;
        completedOn[entry] = 0;
        striped[entry] = false;
        RecordedMessageTimings t = timings[entry];
        if (t == null) {
            t = firstUse(entry);
        }
        t.reset(lengthBytes);
    }

    private RecordedMessageTimings firstUse(int entry) {
        offset[entry] = new long[railCount];
        bytes[entry] = new long[railCount];
        postedNs[entry] = new long[railCount];
        carrier[entry] = new int[railCount];
        return timings[entry] = new RecordedMessageTimings(railCount);
    }

    /**
     * Plans the whole message of {@code entry} as stripes by the policy, over {@code usableRails} less the
     * rails that failed: slot {@code r} holds rail {@code r}'s stripe.
     *
     * @return the number of stripes (0 when no rail is usable: nothing planned)
     * @throws StripeSplitException if the policy split wrongly (nothing planned)
     */
    public int split(int entry, long usableRails, long nowNs) {
        long usable = usableRails & this.usableRails;
        if (usable == 0) {
            return 0;
        }
        long length = timings[entry].lengthBytes();
        Arrays.fill(split, 0);
        policy.split(length, usable, nowNs, split);
        check(entry, length, usable);
        long at = 0;
        for (int r = 0; r < railCount; r++) {
            if (split[r] > 0) {
                put(entry, r, at, split[r]);
                at += split[r];
            }
        }
        striped[entry] = true;
        return Long.bitCount(live[entry]);
    }

    /** Plans the whole message of {@code entry} as one stripe for {@code rail} (multiplexing; slot {@code rail}). */
    public void whole(int entry, int rail) {
        checkRail(rail);
        put(entry, rail, 0, timings[entry].lengthBytes());
    }

    private void put(int entry, int slot, long at, long length) {
        live[entry] |= 1L << slot;
        offset[entry][slot] = at;
        bytes[entry][slot] = length;
        carrier[entry][slot] = slot < railCount ? slot : -1;
    }

    private void check(int entry, long length, long usable) {
        long sum = 0;
        String problem = null;
        for (int r = 0; r < railCount && problem == null; r++) {
            if (split[r] < 0) {
                problem = "rail " + r + " got " + split[r] + " bytes";
            } else if (split[r] > 0 && (usable & (1L << r)) == 0) {
                problem = "rail " + r + " is not usable (usable mask 0x" + Long.toHexString(usable) + ") but got " + split[r] + " bytes";
            }
            sum += split[r];
        }
        if (problem == null && sum != length) {
            problem = "the stripes add up to " + sum + " bytes";
        }
        if (problem != null) {
            throw new StripeSplitException(policy.name() + " split PSN " + psn[entry] + " of " + length + " bytes wrongly: "
                + problem + " " + Arrays.toString(split) + "; a split gives >= 0 bytes per usable rail, 0 to others, summing to the length");
        }
    }

    // ---------------------------------------------------------------- post and complete

    /**
     * Stripe {@code slot} of {@code entry} was posted on {@code carrierRail} at {@code nowNs}: counted in
     * the rail's backlog, its bytes in the message's timings, and {@link StripePolicy#onStripePosted}.
     *
     * @throws IllegalStateException if the slot holds no stripe or is posted already
     */
    public void post(int entry, int slot, int carrierRail, long nowNs) {
        checkRail(carrierRail);
        long bit = 1L << slot;
        if ((live[entry] & bit) == 0 || ((posted[entry] | completed[entry]) & bit) != 0) {
            throw new IllegalStateException("stripe " + slot + " of PSN " + psn[entry] + " is "
                + ((live[entry] & bit) == 0 ? "not planned" : "posted or completed already"));
        }
        long b = bytes[entry][slot];
        posted[entry] |= bit;
        carrier[entry][slot] = carrierRail;
        postedNs[entry][slot] = nowNs;
        if (outstanding[carrierRail] == 0) {
            idleAtPost[entry] |= bit;
        } else {
            idleAtPost[entry] &= ~bit;
        }
        outstanding[carrierRail]++;
        backlogBytes[carrierRail] += b;
        timings[entry].addStripe(carrierRail, b);
        policy.onStripePosted(carrierRail, b, nowNs);
    }

    /**
     * The completion filter: stripe {@code slot} of {@code entry} completed at {@code nowNs} on its
     * carrier rail. A completion of a stripe taken back after a rail failure and not posted again
     * still counts (its bytes arrived).
     *
     * @return {@link #MESSAGE} after the entry's last stripe, {@link #STRIPE} before, {@link #IGNORED}
     *         for a slot without a stripe or completed already
     */
    public int complete(int entry, int slot, long nowNs) {
        long bit = 1L << slot;
        if ((live[entry] & bit) == 0 || (completed[entry] & bit) != 0) {
            return IGNORED;
        }
        completed[entry] |= bit;
        int rail = carrier[entry][slot];
        long b = bytes[entry][slot];
        long post = postedNs[entry][slot];
        if ((posted[entry] & bit) != 0) {
            outstanding[rail]--;
            backlogBytes[rail] -= b;
        }
        RecordedMessageTimings t = timings[entry];
        // on its rail: from post, or from the previous completion there if it queued behind it
        long deliveryNs = nowNs - Math.max(post, lastCompletionNs[rail]);
        if (deliveryNs <= 0 && b > 0) {
            t.censor();
        }
        t.addDelivery(rail, deliveryNs);
        completedOn[entry] |= 1L << rail;
        // the policy sees the previous completion in lastCompletionNs(rail), to time the stripe as above
        policy.onStripeCompleted(rail, b, post, nowNs, (idleAtPost[entry] & bit) != 0, outstanding[rail]);
        lastCompletionNs[rail] = nowNs;
        if (completed[entry] != live[entry]) {
            return STRIPE;
        }
        t.completed(nowNs);
        policy.onMessageCarried(psn[entry], completedOn[entry]);
        if (striped[entry]) {
            policy.onMessageCompleted(t);
        }
        return MESSAGE;
    }

    // ---------------------------------------------------------------- rail failure

    /**
     * {@code rail} failed: no further plan uses it, its backlog is forgotten and the policy hears
     * {@link StripePolicy#onRailRemoved}. Its stripes are taken back per entry with {@link #unpost}.
     *
     * @return false if it had failed already (nothing done)
     */
    public boolean railFailed(int rail) {
        checkRail(rail);
        if ((usableRails & (1L << rail)) == 0) {
            return false;
        }
        usableRails &= ~(1L << rail);
        backlogBytes[rail] = 0;
        outstanding[rail] = 0;
        policy.onRailRemoved(rail);
        return true;
    }

    /** Whether a stripe of {@code entry} posted on {@code rail} has not completed. */
    public boolean carriesOn(int entry, int rail) {
        long pending = posted[entry] & ~completed[entry];
        while (pending != 0) {
            int s = Long.numberOfTrailingZeros(pending);
            pending &= pending - 1;
            if (carrier[entry][s] == rail) {
                return true;
            }
        }
        return false;
    }

    /**
     * Takes stripe {@code slot} of {@code entry} back (posted, not completed) to be posted again: out of
     * its rail's backlog, and the message's timings marked {@linkplain MessageTimings#resent() resent}.
     * Nothing happens to a slot that is not posted or completed already.
     */
    public void unpost(int entry, int slot) {
        long bit = 1L << slot;
        if ((posted[entry] & ~completed[entry] & bit) == 0) {
            return;
        }
        posted[entry] &= ~bit;
        int rail = carrier[entry][slot];
        long b = bytes[entry][slot];
        if ((usableRails & (1L << rail)) != 0) {
            outstanding[rail]--;
            backlogBytes[rail] -= b;
        }
        timings[entry].stripeResent(rail, b);
    }

    /** {@link #unpost} of every posted stripe of {@code entry} that has not completed. */
    public void unpostAll(int entry) {
        long pending = posted[entry] & ~completed[entry];
        while (pending != 0) {
            int s = Long.numberOfTrailingZeros(pending);
            pending &= pending - 1;
            unpost(entry, s);
        }
    }

    /**
     * Re-plans stripe {@code slot} of {@code entry} (taken back with {@link #unpost}) by the policy over
     * the usable rails: its bytes become pieces in rail order, the first in {@code slot}, the others in
     * free slots with increasing index.
     *
     * @return the mask of slots now holding its bytes, to be posted (0 when no rail is usable)
     * @throws IllegalStateException if the policy split wrongly or the entry would need more than {@value #MAX_SLOTS} slots
     */
    public long resplit(int entry, int slot, long nowNs) {
        long bit = 1L << slot;
        if ((live[entry] & ~posted[entry] & ~completed[entry] & bit) == 0) {
            throw new IllegalStateException("stripe " + slot + " of PSN " + psn[entry] + " is not taken back; unpost it first");
        }
        if (usableRails == 0) {
            return 0;
        }
        long at = offset[entry][slot];
        long length = bytes[entry][slot];
        Arrays.fill(split, 0);
        policy.split(length, usableRails, nowNs, split);
        check(entry, length, usableRails);
        live[entry] &= ~bit;
        long slots = 0;
        int next = slot;
        for (int r = 0; r < railCount; r++) {
            if (split[r] > 0) {
                if (next < 0) {
                    next = freeSlot(entry);
                }
                put(entry, next, at, split[r]);
                carrier[entry][next] = r;
                slots |= 1L << next;
                at += split[r];
                next = -1;
            }
        }
        return slots;
    }

    /** Moves stripe {@code slot} of {@code entry} (taken back) whole to {@code rail}: its planned rail becomes {@code rail}. */
    public void move(int entry, int slot, int rail) {
        checkRail(rail);
        carrier[entry][slot] = rail;
    }

    private int freeSlot(int entry) {
        long free = ~live[entry];
        if (free == 0) {
            throw new IllegalStateException("PSN " + psn[entry] + " would need more than " + MAX_SLOTS + " stripes");
        }
        int s = Long.numberOfTrailingZeros(free);
        if (s >= offset[entry].length) {
            grow(entry, Math.min(MAX_SLOTS, Math.max(s + 1, 2 * offset[entry].length)));
        }
        return s;
    }

    private void grow(int entry, int slots) {
        offset[entry] = Arrays.copyOf(offset[entry], slots);
        bytes[entry] = Arrays.copyOf(bytes[entry], slots);
        postedNs[entry] = Arrays.copyOf(postedNs[entry], slots);
        carrier[entry] = Arrays.copyOf(carrier[entry], slots);
    }

    // ---------------------------------------------------------------- reads

    public long psn(int entry) {
        return psn[entry];
    }

    /** Length of the message of {@code entry}, bytes (0 for an entry never begun). */
    public long lengthBytes(int entry) {
        RecordedMessageTimings t = timings[entry];
        return t == null ? 0 : t.lengthBytes();
    }

    /** Slots holding a stripe of {@code entry}. */
    public long slots(int entry) {
        return live[entry];
    }

    /** Slots of {@code entry} posted (and not taken back) or completed. */
    public long postedOrCompleted(int entry) {
        return posted[entry] | completed[entry];
    }

    /** Slots of {@code entry} whose stripe completed. */
    public long completedSlots(int entry) {
        return completed[entry];
    }

    /** Number of stripes of {@code entry}. */
    public int stripeCount(int entry) {
        return Long.bitCount(live[entry]);
    }

    /** Whether every stripe of {@code entry} completed (true for an entry without stripes). */
    public boolean allCompleted(int entry) {
        return completed[entry] == live[entry];
    }

    /** Whether {@code entry} was planned by the policy's split (else whole). */
    public boolean striped(int entry) {
        return striped[entry];
    }

    public long stripeOffset(int entry, int slot) {
        return offset[entry][slot];
    }

    public long stripeBytes(int entry, int slot) {
        return bytes[entry][slot];
    }

    /** The rail stripe {@code slot} is posted on (or planned for, before its post). */
    public int carrier(int entry, int slot) {
        return carrier[entry][slot];
    }

    /** When stripe {@code slot} was last posted, engine clock ns. */
    public long postedNs(int entry, int slot) {
        return postedNs[entry][slot];
    }

    /** Whether nothing was outstanding on its rail when stripe {@code slot} was last posted. */
    public boolean idleAtPost(int entry, int slot) {
        return (idleAtPost[entry] & (1L << slot)) != 0;
    }

    /** Rails on which a stripe of {@code entry} completed (a message counts once per rail it used). */
    public long completedOn(int entry) {
        return completedOn[entry];
    }

    /** The timings recorded for {@code entry} so far; valid until the entry is begun again. Null for an entry never begun. */
    public @Nullable MessageTimings timings(int entry) {
        return timings[entry];
    }

    /** Bytes posted on {@code rail} and not completed. */
    public long backlogBytes(int rail) {
        return backlogBytes[rail];
    }

    /** The backlog of every rail, indexed by rail; read only (for {@code CommonFinishSplit}-style splits). */
    public long[] backlogView() {
        return backlogBytes;
    }

    /** Stripes posted on {@code rail} and not completed. */
    public int outstandingOn(int rail) {
        return outstanding[rail];
    }

    /**
     * The latest completion on {@code rail}, engine clock ns (0 before the first). During
     * {@link StripePolicy#onStripeCompleted} it is still the one before the stripe reported, so the
     * policy can time that stripe as the engine does: {@code completedNs - max(postedNs, lastCompletionNs(rail))}.
     */
    public long lastCompletionNs(int rail) {
        return lastCompletionNs[rail];
    }

    /** Rails not failed, as a bit mask. */
    public long usableRails() {
        return usableRails;
    }

    public int railCount() {
        return railCount;
    }

    public int entries() {
        return psn.length;
    }

    public StripePolicy policy() {
        return policy;
    }

    private void checkRail(int rail) {
        if (rail < 0 || rail >= railCount) {
            throw new IndexOutOfBoundsException("rail in [0, " + railCount + ") required but it was " + rail);
        }
    }
}
