package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.RdmaTransportException;
import io.rdmaflux.core.UnsupportedCapabilityException;
import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.channel.WorkRequestTokens;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.ProtectionDomain;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The one-sided atomics of a connection (fetch-and-add, compare-and-swap): a queue of the atomics
 * waiting, and the {@value #SLOTS} slots of those posted. Each atomic is one verbs atomic work request
 * (ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP) on one rail, taken in round robin among the rails with room;
 * its original value lands in the slot's 8 bytes of a small region this class registers on first use
 * (LOCAL_WRITE) and deregisters when the connection ends. An atomic is never split and never reordered
 * on its rail with respect to its own result, but atomics on different rails are unordered, as are
 * atomics and the put and get fragments of the same epoch (seed 002 &sect;3.2's relaxed ordering).
 *
 * <p><b>A rail failing:</b> an atomic in flight on it fails with an {@link RdmaTransportException}: it
 * may or may not have run at the target, and unlike a put or get fragment it is not idempotent, so it
 * is not posted again (the application decides, e.g. by reading the word).
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class AtomicOps {
    /** Most atomics in flight per connection. */
    static final int SLOTS = 64;

    private final OneSidedEngine engine;
    private final Channel[] channels;
    private final ProtectionDomain pd;
    private final ArrayDeque<OneSidedOp> waiting = new ArrayDeque<>();
    private final OneSidedOp[] posted = new OneSidedOp[SLOTS];
    private final int[] railOf = new int[SLOTS];
    private final ArrayDeque<Integer> freeSlots = new ArrayDeque<>(SLOTS);
    private @Nullable MemoryRegion results;
    private @Nullable ByteBuffer resultView;
    private int nextRail;
    private long completed;

    AtomicOps(OneSidedEngine engine, Channel[] channels, ProtectionDomain pd) {
        this.engine = engine;
        this.channels = channels;
        this.pd = pd;
        for (int i = 0; i < SLOTS; i++) {
            freeSlots.add(i);
        }
    }

    void add(OneSidedOp op) {
        waiting.add(op);
    }

    /** Posts waiting atomics while a slot and a rail with room are free. @return work done */
    int post(long alive) {
        int work = 0;
        OneSidedOp op;
        while ((op = waiting.peek()) != null) {
            if (op.isDone()) {
                waiting.poll();
                continue;
            }
            String invalid = op.remote.invalidReason();
            if (invalid != null) {
                waiting.poll();
                engine.refuse(op, OneSidedChecks.revoked(op.remote, invalid));
                work++;
                continue;
            }
            if (alive == 0) {
                waiting.poll();
                engine.refuse(op, engine.noRailError());
                work++;
                continue;
            }
            long capable = atomicRails(alive);
            if (capable == 0) {
                waiting.poll();
                engine.refuse(op, new UnsupportedCapabilityException("atomics", op.describe() + ": none of the live rails carries atomics "
                    + "(their channel kind is " + channels[Long.numberOfTrailingZeros(alive)].kind() + ", without RDMA READ responses); "
                    + "open the connection with at least one RC rail"));
                work++;
                continue;
            }
            int rail = railWithRoom(capable);
            if (rail < 0 || freeSlots.isEmpty()) {
                return work;
            }
            waiting.poll();
            post(op, rail, freeSlots.poll());
            work++;
        }
        return work;
    }

    /** The rails of {@code alive} whose channel kind has responder answers (RDMA READ): an atomic's result comes back like READ data. */
    private long atomicRails(long alive) {
        long m = 0;
        for (int r = 0; r < channels.length; r++) {
            if ((alive & (1L << r)) != 0 && channels[r].capabilities().rdmaRead()) {
                m |= 1L << r;
            }
        }
        return m;
    }

    private int railWithRoom(long alive) {
        for (int i = 0; i < channels.length; i++) {
            int r = (nextRail + i) % channels.length;
            if ((alive & (1L << r)) != 0 && channels[r].canPostAtomic()) {
                nextRail = r + 1;
                return r;
            }
        }
        return -1;
    }

    private void post(OneSidedOp op, int rail, int slot) {
        MemoryRegion r = results();
        posted[slot] = op;
        railOf[slot] = rail;
        op.railsUsed |= 1L << rail;
        op.fragmentsLeft = 1;
        // a post that fails fails the channel; the failure scan then fails this atomic
        channels[rail].postAtomic(op.atomic == OneSidedOp.FETCH_ADD, r.address() + (long) slot * Long.BYTES, r.lkey(),
            op.remote.address() + op.remoteOffset, op.remote.rkey(rail), op.compareAdd, op.swap, WorkRequestTokens.oneSidedAtomic(slot));
    }

    private MemoryRegion results() {
        MemoryRegion r = results;
        if (r == null) {
            r = pd.allocateMemory((long) SLOTS * Long.BYTES, Access.LOCAL_WRITE);
            results = r;
            resultView = r.buffer().order(ByteOrder.nativeOrder());
        }
        return r;
    }

    /** The atomic in {@code slot} was answered: its result is read and the operation ends. */
    void onCompleted(int slot) {
        OneSidedOp op = slot >= 0 && slot < SLOTS ? posted[slot] : null;
        if (op == null) {
            return;
        }
        posted[slot] = null;
        freeSlots.add(slot);
        op.result = java.util.Objects.requireNonNull(resultView).getLong(slot * Long.BYTES);
        completed++;
        engine.complete(op);
    }

    /** Atomics in flight on {@code rail}. */
    int postedOn(int rail) {
        int n = 0;
        for (int s = 0; s < SLOTS; s++) {
            if (posted[s] != null && railOf[s] == rail) {
                n++;
            }
        }
        return n;
    }

    /** Rail {@code rail} failed: its atomics in flight fail (never posted again). */
    void railFailed(int rail, String railName) {
        for (int s = 0; s < SLOTS; s++) {
            OneSidedOp op = posted[s];
            if (op != null && railOf[s] == rail) {
                posted[s] = null;
                freeSlots.add(s);
                engine.fail(op, new RdmaTransportException(op.describe() + ": " + railName + " failed with it in flight; it may or may not "
                    + "have run at the target, and an atomic is not idempotent, so it is not posted again (read the word to find out)",
                    null, null));
            }
        }
    }

    /** The connection ended: every atomic waiting or in flight fails with {@code error}; the result region is deregistered. */
    void terminate(Throwable error) {
        for (int s = 0; s < SLOTS; s++) {
            OneSidedOp op = posted[s];
            if (op != null) {
                posted[s] = null;
                engine.fail(op, error);
            }
        }
        OneSidedOp op;
        while ((op = waiting.poll()) != null) {
            engine.fail(op, error);
        }
        MemoryRegion r = results;
        if (r != null && r.isValid()) {
            r.deregister();
        }
    }

    /** Atomics answered so far. */
    long completed() {
        return completed;
    }

    /** Atomics posted and not answered. */
    int inFlight() {
        return SLOTS - freeSlots.size();
    }
}
