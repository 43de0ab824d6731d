package io.rdmaflux.eager;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The node-level polling set of seed 001 &sect;4.6: the receive rings a node polls, at most
 * {@link #capacity()} of them, so the cost of polling stays bounded however many peers are connected.
 * A rail whose ring is not in the set is not offered to its sender, which then uses send/receive.
 *
 * <p><b>Policy</b> (the receiver manages it): a rail enters when a seat is free, at connect or later;
 * a rail outside the set that received {@code promoteAfterMessages} or more messages over send/receive
 * within one check period is busy and {@link #requestSeat asks for a seat}: the member whose last ring
 * arrival is oldest, if idle for at least {@code idleNs}, is asked to leave. That member revokes its
 * ring on its own progress thread (its sender falls back after draining in-flight WRITEs, see
 * {@link EagerChannel}) and frees the seat; the busy rail takes it at its next check.
 *
 * <p><b>Concurrency:</b> thread-safe: the connections of one node may run on different progress
 * threads (a node's connections share one thread in DEDICATED mode, but a SHARED engine or an
 * application driving INVOKER nodes may spread them). Members are only ever told to leave through a
 * volatile flag they read on their own thread; the set never touches a member's ring.
 */
final class PollingSet {
    /** What the set needs of a member. */
    interface Member {
        /** The clock reading of the member's last ring arrival (or of its entering), ns; any thread. */
        long lastRingArrivalNs();

        /** Asks the member to leave: it revokes its ring on its own thread and then calls {@link #leave}. */
        void requestDemotion();

        /** Whether a demotion was asked and not finished. */
        boolean demotionRequested();
    }

    private final int capacity;
    private final Set<Member> members = new LinkedHashSet<>();
    private long promotions;
    private long demotionsRequested;

    PollingSet(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity >= 0 required but it was " + capacity);
        }
        this.capacity = capacity;
    }

    int capacity() {
        return capacity;
    }

    /** Takes a seat if one is free. @return whether {@code m} is (now) a member */
    synchronized boolean tryEnter(Member m) {
        if (members.contains(m)) {
            return true;
        }
        if (members.size() >= capacity) {
            return false;
        }
        members.add(m);
        promotions++;
        return true;
    }

    /** Gives the seat back; idempotent. */
    synchronized void leave(Member m) {
        members.remove(m);
    }

    /**
     * A busy rail outside the set asks for a seat: if the set is full, the member idle longest (at least
     * {@code idleNs} before {@code nowNs}) is asked to leave, unless one is leaving already.
     *
     * @return whether a member was asked to leave
     */
    synchronized boolean requestSeat(long nowNs, long idleNs) {
        if (members.size() < capacity) {
            return false;
        }
        Member idlest = null;
        long oldest = Long.MAX_VALUE;
        for (Member m : members) {
            if (m.demotionRequested()) {
                // one is leaving already: its seat is the one to take
                return false;
            }
            long t = m.lastRingArrivalNs();
            if (t < oldest) {
                oldest = t;
                idlest = m;
            }
        }
        if (idlest == null || nowNs - oldest < idleNs) {
            return false;
        }
        idlest.requestDemotion();
        demotionsRequested++;
        return true;
    }

    synchronized int size() {
        return members.size();
    }

    synchronized boolean contains(Member m) {
        return members.contains(m);
    }

    synchronized List<Member> members() {
        return new ArrayList<>(members);
    }

    /** Rails that entered the set so far. */
    synchronized long promotions() {
        return promotions;
    }

    /** Members asked to leave so far. */
    synchronized long demotionsRequested() {
        return demotionsRequested;
    }

    @Override
    public synchronized String toString() {
        return "PollingSet{" + members.size() + "/" + capacity + "}";
    }
}
