package io.rdmaflux.striping;

import java.util.PriorityQueue;

/**
 * Deterministic discrete-event loop in virtual time for rail simulations: events run in (time,
 * insertion order); nothing reads a wall clock and no thread is started.
 */
final class VirtualTimeLoop {
    private record Event(long timeNs, long seq, Runnable action) {
    }

    private final PriorityQueue<Event> events = new PriorityQueue<>((a, b) ->
        a.timeNs != b.timeNs ? Long.compare(a.timeNs, b.timeNs) : Long.compare(a.seq, b.seq));
    private long nowNs;
    private long seq;

    long nowNs() {
        return nowNs;
    }

    void at(long timeNs, Runnable action) {
        if (timeNs < nowNs) {
            throw new IllegalArgumentException("event at " + timeNs + " is in the past (now " + nowNs + ")");
        }
        events.add(new Event(timeNs, seq++, action));
    }

    void after(long delayNs, Runnable action) {
        at(nowNs + delayNs, action);
    }

    /** Runs events up to and including {@code timeNs}; the clock ends at {@code timeNs}. */
    void runUntil(long timeNs) {
        while (!events.isEmpty() && events.peek().timeNs <= timeNs) {
            Event e = events.poll();
            nowNs = e.timeNs;
            e.action.run();
        }
        nowNs = Math.max(nowNs, timeNs);
    }

    /**
     * Runs until no event is left or the next one lies after {@code limitNs}; the clock stays at
     * the last event. Returns whether it went idle.
     */
    boolean runToIdle(long limitNs) {
        while (!events.isEmpty() && events.peek().timeNs <= limitNs) {
            Event e = events.poll();
            nowNs = e.timeNs;
            e.action.run();
        }
        return events.isEmpty();
    }

    boolean idle() {
        return events.isEmpty();
    }
}
