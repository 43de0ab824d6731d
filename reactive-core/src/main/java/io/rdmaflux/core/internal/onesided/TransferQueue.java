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
 * <p><b>Concurrency:</b> progress thread only.
 */
final class TransferQueue {
    private final boolean put;
    private final Channel[] channels;
    private final FragmentTable table;
    private final LoadBalancedFragmenter fragmenter;
    private final long[] outstanding;
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
     * @return fragments posted (operations refused count as one each)
     */
    int post(long alive, OneSidedEngine engine, int limit) {
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
            work += postReady(alive, engine, limit - work);
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

    private int postReady(long alive, OneSidedEngine engine, int limit) {
        int posted = 0;
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
