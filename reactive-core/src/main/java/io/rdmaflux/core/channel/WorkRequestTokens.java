package io.rdmaflux.core.channel;

/**
 * The one codec of the 64-bit values that name work: the <b>work-request id</b> a channel gives the
 * verbs layer (and gets back in its completions), and the <b>completion token</b> the connection gives
 * a credit-taking frame (and gets back in {@link ChannelEvents#onSendCompleted}). Both layouts live
 * here so no two classes pack bits their own way.
 *
 * <pre>
 * work-request id (channel &harr; verbs)
 *  63   60 59                                    32 31                       0
 * +-------+----------------------------------------+--------------------------+
 * | kind  |                  0                     |  slot (send/recv buffer) |
 * +-------+----------------------------------------+--------------------------+
 *   kind: 1 RECV, 2 SEND, 3 WRITE, 4 READ (bits 0..59: the READ's completion token, a STRIPE token)
 *
 * completion token (connection &harr; channel)
 *   -1                       NONE: no completion wanted (control frames)
 *   -2                       UNREPORTED: counts as in flight, not reported (a fragment before the last, an RTS)
 *   0 .. 2^32-1              MESSAGE: the last fragment of the message with this PSN
 *   1&lt;&lt;62 | count&lt;&lt;32 | psn  PACKED: a packed DATA frame of count (1..2^16-1) messages from psn
 *   1&lt;&lt;40 | entry&lt;&lt;8 | index  STRIPE: the FIN of stripe index (0..255) of rendezvous send entry
 *   1&lt;&lt;50 | fragment          ONE_SIDED: an RDMA READ of a one-sided get's fragment (0..2^28-1)
 *   1&lt;&lt;50 | 1&lt;&lt;30 | slot  ONE_SIDED ATOMIC: a one-sided atomic's work request (slot 0..2^28-1)
 * </pre>
 *
 * <p><b>Concurrency:</b> static pure functions.
 */
public final class WorkRequestTokens {
    /** No completion is reported for the frame. */
    public static final long NONE = -1;
    /** The frame counts as in flight until it completes, but its completion is not reported. */
    public static final long UNREPORTED = -2;

    private static final long PACKED = 1L << 62;
    private static final long STRIPE = 1L << 40;
    private static final long ONE_SIDED = 1L << 50;
    private static final long ATOMIC = 1L << 30;
    /** Fragment numbers of one-sided tokens (and bare-WRITE tags) are below this. */
    public static final int MAX_FRAGMENT = 1 << 28;

    /** Work-request kind: a posted receive. */
    public static final long WR_RECV = 1L << 60;
    /** Work-request kind: a SEND of a frame from a send slot. */
    public static final long WR_SEND = 2L << 60;
    /** Work-request kind: an RDMA WRITE (a rendezvous stripe). */
    public static final long WR_WRITE = 3L << 60;
    /** Work-request kind: an RDMA READ (a stripe of the READ rendezvous); the low 60 bits are its completion token. */
    public static final long WR_READ = 4L << 60;
    private static final long WR_KIND_MASK = 0xFL << 60;

    private WorkRequestTokens() {
    }

    // ---------------------------------------------------------------- completion tokens

    /** The token of a message's last fragment (or its only frame). */
    public static long message(int psn) {
        return psn & 0xFFFFFFFFL;
    }

    /** The token of a packed DATA frame of {@code count} messages from {@code firstPsn}. */
    public static long packed(int firstPsn, int count) {
        return PACKED | ((long) count << 32) | (firstPsn & 0xFFFFFFFFL);
    }

    /** The token of the FIN of stripe {@code index} of rendezvous send entry {@code entry}. */
    public static long stripe(int entry, int index) {
        return STRIPE | (long) entry << 8 | index;
    }

    /** Whether the token is reported at all (a message, packed frame or stripe). */
    public static boolean isReported(long token) {
        return token >= 0;
    }

    public static boolean isPacked(long token) {
        return token >= 0 && (token & PACKED) != 0;
    }

    public static boolean isStripe(long token) {
        return token >= 0 && (token & PACKED) == 0 && (token & ONE_SIDED) == 0 && (token & STRIPE) != 0;
    }

    /**
     * The token of an RDMA READ of one-sided fragment {@code fragment} (a get, seed 002 &sect;3.2).
     *
     * @throws IllegalArgumentException if {@code fragment} is outside [0, {@link #MAX_FRAGMENT})
     */
    public static long oneSided(int fragment) {
        if (fragment < 0 || fragment >= MAX_FRAGMENT) {
            throw new IllegalArgumentException("fragment in [0, 2^28) required but it was " + fragment);
        }
        return ONE_SIDED | fragment;
    }

    /** Whether the token is a one-sided fragment's ({@link #oneSided}). */
    public static boolean isOneSided(long token) {
        return token >= 0 && (token & PACKED) == 0 && (token & ONE_SIDED) != 0;
    }

    /**
     * The token of one-sided atomic {@code slot} (a fetch-and-add or compare-and-swap); it is also a
     * {@link #isOneSided} token, told apart by {@link #isOneSidedAtomic}.
     *
     * @throws IllegalArgumentException if {@code slot} is outside [0, {@link #MAX_FRAGMENT})
     */
    public static long oneSidedAtomic(int slot) {
        if (slot < 0 || slot >= MAX_FRAGMENT) {
            throw new IllegalArgumentException("atomic slot in [0, 2^28) required but it was " + slot);
        }
        return ONE_SIDED | ATOMIC | slot;
    }

    /** Whether the token is a one-sided atomic's ({@link #oneSidedAtomic}). */
    public static boolean isOneSidedAtomic(long token) {
        return isOneSided(token) && (token & ATOMIC) != 0;
    }

    /** The fragment number of a {@link #oneSided} token, or the slot of a {@link #oneSidedAtomic} one. */
    public static int oneSidedFragment(long token) {
        return (int) (token & (MAX_FRAGMENT - 1));
    }

    /** The PSN of a message token, or the first PSN of a packed one. */
    public static int psn(long token) {
        return (int) token;
    }

    /** The messages of a packed token. */
    public static int packedCount(long token) {
        return (int) ((token >>> 32) & 0xFFFF);
    }

    public static int stripeEntry(long token) {
        return (int) ((token & ~STRIPE) >>> 8);
    }

    public static int stripeIndex(long token) {
        return (int) (token & 0xFF);
    }

    // ---------------------------------------------------------------- work-request ids

    /** The work-request id of {@code kind} ({@link #WR_RECV}, {@link #WR_SEND}, {@link #WR_WRITE}) for buffer {@code slot}. */
    public static long wrId(long kind, int slot) {
        return kind | slot;
    }

    public static long wrKind(long wrId) {
        return wrId & WR_KIND_MASK;
    }

    public static int wrSlot(long wrId) {
        return (int) (wrId & ~WR_KIND_MASK);
    }

    /** The work-request id of an RDMA READ whose completion reports {@code token} (a {@link #stripe} token). */
    public static long readWrId(long token) {
        if (token < 0 || (token & WR_KIND_MASK) != 0) {
            throw new IllegalArgumentException("an RDMA READ's token must be a stripe token below 2^60 but it was " + token);
        }
        return WR_READ | token;
    }

    /** The completion token of an RDMA READ's work-request id. */
    public static long readToken(long wrId) {
        return wrId & ~WR_KIND_MASK;
    }
}
