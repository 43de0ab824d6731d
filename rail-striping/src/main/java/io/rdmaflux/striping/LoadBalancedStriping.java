package io.rdmaflux.striping;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Load-balanced fragmentation, seed 002 §3.2 (Vishnu et al., MPI-2 one sided on multi-rail
 * InfiniBand): a message is divided so that the load of every subchannel — the bytes it still has
 * outstanding plus its new fragment — comes out equal ("water filling"). With no outstanding load
 * this is an equal split, as the paper says it falls back to; a subchannel already busy gets less.
 *
 * <p>The paper keeps separate queues for MPI_Put (RDMA WRITE, outbound) and MPI_Get (RDMA READ,
 * inbound) because they load opposite link directions: give each direction its own scheduler and
 * its own instance of this policy (see {@code io.rdmaflux.striping.verbs.OneSidedRails}), so a
 * put's balance never counts the gets' bytes and vice versa.
 */
final class LoadBalancedStriping implements StripingPolicy {
    private final int railCount;
    private final long granuleBytes;
    private final long[] outstandingBytes;
    private final AtomicLongArray lastShare;

    LoadBalancedStriping(int railCount, long granuleBytes) {
        this.railCount = RailMask.checkRailCount(railCount);
        this.granuleBytes = StripingPolicies.checkGranule(granuleBytes);
        this.outstandingBytes = new long[railCount];
        this.lastShare = new AtomicLongArray(railCount);
        for (int i = 0; i < railCount; i++) {
            lastShare.lazySet(i, Double.doubleToRawLongBits(1.0 / railCount));
        }
    }

    @Override
    public void split(long lengthBytes, long usableRails, long nowNs, long[] stripeBytes) {
        // find the common load level L with sum over rails of max(0, L - outstanding_i) = length
        int n = RailMask.count(usableRails);
        long[] sorted = new long[n];
        int k = 0;
        for (int rail = 0; rail < railCount; rail++) {
            stripeBytes[rail] = 0;
            if (RailMask.contains(usableRails, rail)) {
                sorted[k++] = outstandingBytes[rail];
            }
        }
        java.util.Arrays.sort(sorted);
        double level = 0;
        long below = 0;
        for (int i = 0; i < n; i++) {
            below += sorted[i];
            double candidate = (double) (lengthBytes + below) / (i + 1);
            if (i == n - 1 || candidate <= sorted[i + 1]) {
                level = candidate;
                break;
            }
        }
        long assigned = 0;
        int fullest = -1;
        for (int rail = 0; rail < railCount; rail++) {
            if (RailMask.contains(usableRails, rail)) {
                long share = (long) Math.max(0, level - outstandingBytes[rail]);
                stripeBytes[rail] = Math.min(lengthBytes - assigned, share / granuleBytes * granuleBytes);
                assigned += stripeBytes[rail];
                if (fullest < 0 || stripeBytes[rail] > stripeBytes[fullest]) {
                    fullest = rail;
                }
            }
        }
        // the rounding remainder goes to the least loaded rails, one granule at a time
        while (assigned < lengthBytes) {
            int pick = -1;
            for (int rail = 0; rail < railCount; rail++) {
                if (RailMask.contains(usableRails, rail)
                    && (pick < 0 || outstandingBytes[rail] + stripeBytes[rail] < outstandingBytes[pick] + stripeBytes[pick])) {
                    pick = rail;
                }
            }
            long chunk = Math.min(granuleBytes, lengthBytes - assigned);
            stripeBytes[pick] += chunk;
            assigned += chunk;
        }
        for (int rail = 0; rail < railCount; rail++) {
            lastShare.lazySet(rail, Double.doubleToRawLongBits((double) stripeBytes[rail] / Math.max(1, lengthBytes)));
        }
    }

    @Override
    public void onStripePosted(int rail, long lengthBytes, long nowNs) {
        outstandingBytes[rail] += lengthBytes;
    }

    @Override
    public void onStripeCompleted(int rail, long lengthBytes, long postedNs, long completedNs,
                                  boolean railIdleAtPost, int outstandingOnRail) {
        outstandingBytes[rail] = outstandingOnRail == 0 ? 0 : Math.max(0, outstandingBytes[rail] - lengthBytes);
    }

    @Override
    public void onRailRemoved(int rail) {
        outstandingBytes[rail] = 0;
        lastShare.lazySet(rail, Double.doubleToRawLongBits(0.0));
    }

    @Override
    public double share(int rail) {
        return Double.longBitsToDouble(lastShare.get(rail));
    }

    @Override
    public int railCount() {
        return railCount;
    }

    @Override
    public String name() {
        return "load-balanced";
    }
}
