package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.verbs.MemoryRegion;

import java.util.ArrayDeque;
import java.util.Iterator;

/**
 * The queue of one direction (seed 002 &sect;3.2: "independent queues of MPI_Put and MPI_Get
 * operations"): puts (RDMA WRITE, the outbound link direction) or gets (RDMA READ, inbound). It plans
 * the operation at its head with its own {@link LoadBalancedFragmenter} over its own outstanding bytes
 * per rail, and posts the planned fragments as their rails have room for RDMA operations; fragments of
 * a failed rail come back here and go again on the least loaded surviving rail. At most one
 * operation's fragments (and fragments to post again) wait at a time: operations behind it wait whole.
 *
 * <p><b>Sharing a rail's RDMA slots with the other direction</b> (&sect;4.3): while the other queue has a
 * fragment waiting for rail r (or an operation not split yet), this queue posts on r only if it has no more
 * fragments in flight there than the other one, and a put only into a slot a get could take too
 * ({@code Channel.canReadStripe}: WRITEs + READs below the rail's RDMA budget), so neither direction gets
 * more than one RDMA slot ahead of the other on a rail both want. Without it puts took every slot that
 * freed (a channel takes a WRITE while WRITEs alone are below the budget, a READ only while WRITEs +
 * READs are), and the gets posted afterwards waited behind them in the queue pair's in-order send queue,
 * leaving the inbound direction idle: puts and gets at once measured 1.30&times; either alone on one shaped rail, not the 2&times;
 * of two independent link directions (reactive-core README, "Interleaved puts and gets").
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class TransferQueue {
    private final boolean put;
    private final Channel[] channels;
    private final FragmentTable table;
    private final LoadBalancedFragmenter fragmenter;
    private final long[] outstanding;
    private final int[] inFlight;
    private final long[] plan;
    private final ArrayDeque<OneSidedOp> waiting = new ArrayDeque<>();
    private final ArrayDeque<Fragment> ready = new ArrayDeque<>();
    private long bytesPosted;
    private final long[] bytesPostedOnRail;

    TransferQueue(boolean put, Channel[] channels, FragmentTable table, long switchoverBytes, long granuleBytes) {
        this.put = put;
        this.channels = channels;
        this.table = table;
        this.fragmenter = new LoadBalancedFragmenter(channels.length, switchoverBytes, granuleBytes);
        this.outstanding = new long[channels.length];
        this.inFlight = new int[channels.length];
        this.plan = new long[channels.length];
        this.bytesPostedOnRail = new long[channels.length];
    }

    void add(OneSidedOp op) {
        waiting.add(op);
    }

    /**
     * Plans and posts what the rails take now.
     *
     * @param alive the rails that may carry one-sided work (bit r for rail r)
     * @param limit the most fragments to post in this call
     * @param other the other direction's queue, whose waiting fragments this one leaves RDMA slots to
     * @return fragments posted (operations refused count as one each)
     */
    int post(long alive, OneSidedEngine engine, int limit, TransferQueue other) {
        int work = 0;
        while (work < limit) {
            if (ready.isEmpty()) {
                OneSidedOp op = waiting.poll();
                if (op == null) {
                    return work;
                }
                if (op.isDone()) {
                    continue;
                }
                String invalid = op.remote.invalidReason();
                if (invalid != null) {
                    engine.refuse(op, OneSidedChecks.revoked(op.remote, invalid));
                    work++;
                    continue;
                }
                if (alive == 0) {
                    engine.refuse(op, engine.noRailError());
                    work++;
                    continue;
                }
                planFragments(op, alive);
            }
            work += postReady(alive, engine, limit - work, other);
            if (!ready.isEmpty()) {
                return work;
            }
        }
        return work;
    }

    private void planFragments(OneSidedOp op, long alive) {
        fragmenter.split(op.lengthBytes, alive, outstanding, plan);
        long offset = 0;
        int count = 0;
        for (int r = 0; r < channels.length; r++) {
            if (plan[r] > 0) {
                ready.add(new Fragment(op, offset, (int) plan[r], r));
                offset += plan[r];
                count++;
            }
        }
        op.fragmentsLeft = count;
    }

    private int postReady(long alive, OneSidedEngine engine, int limit, TransferQueue other) {
        int posted = 0;
        long otherWaiting = other.waitingRails();
        for (Iterator<Fragment> it = ready.iterator(); it.hasNext() && posted < limit; ) {
            Fragment f = it.next();
            if (f.op.isDone()) {
                it.remove();
                continue;
            }
            if ((alive & (1L << f.rail)) == 0) {
                if (alive == 0) {
                    it.remove();
                    engine.fail(f.op, engine.noRailError());
                    continue;
                }
                f.rail = fragmenter.leastLoaded(alive, outstanding);
            }
            Channel ch = channels[f.rail];
            if (put ? !ch.canPostWrite() : !ch.canReadStripe()) {
                continue;
            }
            // the other direction waits for this rail: stay level with it, and let puts take only slots a get could take too
            if ((otherWaiting & (1L << f.rail)) != 0 && (inFlight[f.rail] > other.inFlight[f.rail] || put && !ch.canReadStripe())) {
                continue;
            }
            it.remove();
            post(ch, f);
            posted++;
        }
        return posted;
    }

    private void post(Channel ch, Fragment f) {
        OneSidedOp op = f.op;
        MemoryRegion mr = java.util.Objects.requireNonNull(op.local, "a put or get has local memory");
        int slot = table.add(f);
        long local = mr.address() + op.localOffset + f.offset;
        long remote = op.remote.address() + op.remoteOffset + f.offset;
        int rkey = op.remote.rkey(f.rail);
        outstanding[f.rail] += f.lengthBytes;
        inFlight[f.rail]++;
        bytesPosted += f.lengthBytes;
        bytesPostedOnRail[f.rail] += f.lengthBytes;
        op.railsUsed |= 1L << f.rail;
        if (put) {
            // false: the channel failed; the failure scan posts the fragment again elsewhere
            ch.postWrite(local, mr.lkey(), remote, rkey, f.lengthBytes, slot);
        } else {
            ch.readStripe(local, mr.lkey(), remote, rkey, f.lengthBytes, WorkRequestTokens.oneSided(slot));
        }
    }

    /** A posted fragment of this queue completed (or was taken back from a failed rail): its bytes are no longer outstanding. */
    void retired(Fragment f) {
        outstanding[f.rail] = Math.max(0, outstanding[f.rail] - f.lengthBytes);
        inFlight[f.rail] = Math.max(0, inFlight[f.rail] - 1);
    }

    /**
     * The rails (bit r for rail r) this queue waits for: those of its planned fragments, or every rail
     * when nothing is planned but operations wait (not split yet, they may go on any rail).
     */
    long waitingRails() {
        long mask = 0;
        for (Fragment f : ready) {
            if (!f.op.isDone()) {
                mask |= 1L << f.rail;
            }
        }
        return mask == 0 && !waiting.isEmpty() ? -1L : mask;
    }

    /** Fragments of this queue posted on {@code rail} and not completed. */
    int inFlight(int rail) {
        return inFlight[rail];
    }

    /** A fragment taken back from failed rail {@code f.rail}: posted again first, on a surviving rail. */
    void repost(Fragment f) {
        retired(f);
        ready.addFirst(f);
    }

    /** Fails every operation waiting or planned with {@code error}. */
    void failAll(OneSidedEngine engine, Throwable error) {
        for (Fragment f : ready) {
            engine.fail(f.op, error);
        }
        ready.clear();
        OneSidedOp op;
        while ((op = waiting.poll()) != null) {
            engine.fail(op, error);
        }
    }

    long outstanding(int rail) {
        return outstanding[rail];
    }

    long bytesPostedOn(int rail) {
        return bytesPostedOnRail[rail];
    }

    long bytesPosted() {
        return bytesPosted;
    }

    int waiting() {
        return waiting.size() + ready.size();
    }
}
