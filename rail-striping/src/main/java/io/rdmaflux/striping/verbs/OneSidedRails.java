package io.rdmaflux.striping.verbs;

import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.striping.RailSubchannel;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingMetrics;
import java.util.List;

/**
 * One-sided put/get over rails, seed 002 §3 (Vishnu et al., MPI-2 one sided on multi-rail
 * InfiniBand): puts (RDMA WRITE, outbound) and gets (RDMA READ, inbound) have separate queues —
 * two {@link CommunicationScheduler}s, each with its own policy instance — so each direction is
 * balanced by its own load and interleaved puts and gets use both link directions at once.
 * Below the spec's switchover threshold a transfer goes whole on one rail (round robin by
 * default); above it, it is fragmented (use {@code StripingPolicies.loadBalanced()}, the paper's
 * load balanced fragmentation).
 *
 * <p>Ordering is relaxed as one-sided semantics allow inside an epoch (seed 002 §3.2): completions
 * of each direction are released in their own issue order, with no order between the two.
 *
 * <p><b>Concurrency:</b> one thread drives {@link #put}, {@link #get}, {@link #poll} and
 * {@link #pollCompleted}.
 */
public final class OneSidedRails {
    private final List<RdmaRail> rails;
    private final CommunicationScheduler<RdmaTransfer> puts;
    private final CommunicationScheduler<RdmaTransfer> gets;

    /**
     * @param spec  configures both queues (each gets fresh policy instances)
     * @param rails one per rail, in rail order; this object becomes their only listener
     * @throws IllegalArgumentException if the rail count differs from the spec's
     */
    public OneSidedRails(RailsSpec spec, List<RdmaRail> rails) {
        if (rails.size() != spec.railCount()) {
            throw new IllegalArgumentException("one rail per spec rail required: spec has " + spec.railCount() + " rails but "
                + rails.size() + " were given");
        }
        this.rails = List.copyOf(rails);
        this.puts = new CommunicationScheduler<>(spec, s -> this.rails.get(s.rail()).post(s));
        this.gets = new CommunicationScheduler<>(spec, s -> this.rails.get(s.rail()).post(s));
        for (int rail = 0; rail < rails.size(); rail++) {
            rails.get(rail).start(RdmaRail.Direction.PUT, rail, listener(puts));
            rails.get(rail).start(RdmaRail.Direction.GET, rail, listener(gets));
        }
    }

    private static RailSubchannel.StripeListener listener(CommunicationScheduler<RdmaTransfer> s) {
        return new RailSubchannel.StripeListener() {
            @Override
            public void onStripeCompleted(int rail, long stripeId, long nowNs) {
                s.onStripeCompleted(rail, stripeId, nowNs);
            }

            @Override
            public void onRailFailed(int rail, Throwable cause, long nowNs) {
                s.onRailFailed(rail, cause, nowNs);
            }
        };
    }

    /**
     * Issues a put.
     *
     * @return its PSN in the put queue, or {@link CommunicationScheduler#BACK_PRESSURED} /
     *         {@link CommunicationScheduler#NO_RAIL}
     */
    public long put(RdmaPut put, long nowNs) {
        return puts.send(put, put.lengthBytes(), nowNs);
    }

    /**
     * Issues a get.
     *
     * @return its PSN in the get queue, or {@link CommunicationScheduler#BACK_PRESSURED} /
     *         {@link CommunicationScheduler#NO_RAIL}
     */
    public long get(RdmaGet get, long nowNs) {
        return gets.send(get, get.lengthBytes(), nowNs);
    }

    /** Polls every rail's completion queue in turn (seed 002 §3.2: round robin over the CQs). */
    public int poll(long nowNs) {
        int work = 0;
        for (RdmaRail r : rails) {
            work += r.poll(nowNs);
        }
        return work;
    }

    /** Releases completed puts, then completed gets, each in issue order. */
    public int pollCompleted(CommunicationScheduler.CompletedMessageHandler<RdmaTransfer> handler) {
        return puts.pollCompleted(Integer.MAX_VALUE, handler) + gets.pollCompleted(Integer.MAX_VALUE, handler);
    }

    /** Puts and gets issued and not yet released. */
    public int inFlight() {
        return puts.inFlight() + gets.inFlight();
    }

    public StripingMetrics putMetrics() {
        return puts.metrics();
    }

    public StripingMetrics getMetrics() {
        return gets.metrics();
    }
}
