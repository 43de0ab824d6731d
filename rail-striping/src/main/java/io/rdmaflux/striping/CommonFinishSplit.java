package io.rdmaflux.striping;

/**
 * Tops every rail up to one finish time: the split a scheduler uses when its striping policy splits by
 * measured rates ({@link StripingPolicy#splitsByRate()}) and some rails still have work queued.
 *
 * <p>Given the policy's split {@code s'_i} of a message of {@code S} bytes (in proportion to the rails'
 * rates, {@code w_i = s'_i / S}) and the bytes {@code B_i} queued on each rail, it chooses
 * {@code s_i = max(0, T·w_i − B_i)} with {@code Σ s_i = S} (water filling: a rail whose queue alone
 * outlasts {@code T} gets nothing). With queues in proportion to the rates this is exactly the
 * policy's split. Seed 004 &sect;II-B adds each rail's time until idle to its transfer time the same
 * way; seed 000 &sect;4.4 splits every message by the weights alone, which leaves the backlog of every
 * message split while the weights were still off (the even start of adaptive striping, a rail that
 * stalled for a few ms) in place: with many messages in flight the faster rail runs dry while the
 * message window waits on the other (measured: 1.128 of the ideal makespan instead of 1.000 for
 * 200 × 1 MiB on 4:1 rails with 16 in flight, {@code MessageRailSchedulerTest}).
 *
 * <p>Stateless; no allocation: the caller passes a scratch array. Not thread-safe only in that the
 * arrays passed must not change during the call.
 */
public final class CommonFinishSplit {
    private CommonFinishSplit() {
    }

    /**
     * Replaces {@code stripeBytes} (the policy's split of {@code lengthBytes}) by the common-finish split.
     * Stripes are whole multiples of {@code granuleBytes} except the one of the last rail used, which
     * takes what flooring left over, so the stripes, laid out contiguously in rail order, still cover
     * the message exactly. Fewer than two rails with bytes: the split is left as it is.
     *
     * @param lengthBytes  message length, &gt; 0
     * @param usableRails  bit mask of the rails that may get bytes
     * @param backlogBytes per rail: bytes posted there and not completed ({@code B_i}), &gt;= 0
     * @param granuleBytes stripe granule, &gt;= 1
     * @param stripeBytes  in: the policy's split, adding up to {@code lengthBytes}; out: the new split
     * @param rateScratch  scratch, at least as long as {@code stripeBytes}
     */
    public static void topUp(long lengthBytes, long usableRails, long[] backlogBytes, long granuleBytes, long[] stripeBytes,
                             double[] rateScratch) {
        int railCount = stripeBytes.length;
        long active = 0;
        for (int rail = 0; rail < railCount; rail++) {
            rateScratch[rail] = (double) stripeBytes[rail] / lengthBytes;
            if (RailMask.contains(usableRails, rail) && stripeBytes[rail] > 0) {
                active |= 1L << rail;
            }
        }
        if (RailMask.count(active) < 2) {
            return;
        }
        // level T in bytes per unit of rate: drop the rails whose backlog already reaches past it, repeat
        // (it ends: with S > 0 not every rail can be past the level)
        double level;
        while (true) {
            double rates = 0;
            double bytes = lengthBytes;
            for (int rail = 0; rail < railCount; rail++) {
                if (RailMask.contains(active, rail)) {
                    rates += rateScratch[rail];
                    bytes += backlogBytes[rail];
                }
            }
            level = bytes / rates;
            long behind = 0;
            for (int rail = 0; rail < railCount; rail++) {
                if (RailMask.contains(active, rail) && level * rateScratch[rail] <= backlogBytes[rail]) {
                    behind |= 1L << rail;
                }
            }
            if (behind == 0) {
                break;
            }
            active &= ~behind;
        }
        long assigned = 0;
        int last = -1;
        for (int rail = 0; rail < railCount; rail++) {
            long b = 0;
            if (RailMask.contains(active, rail)) {
                double exact = Math.max(0, level * rateScratch[rail] - backlogBytes[rail]);
                b = Math.min(lengthBytes, (long) (exact / granuleBytes) * granuleBytes);
                last = rail;
            }
            stripeBytes[rail] = b;
            assigned += b;
        }
        // flooring left less than a granule per rail: the last rail used takes it, with the message's tail
        stripeBytes[last] += lengthBytes - assigned;
    }
}
