package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link AgentSchedule}: hot, cold, signals, rotation and idle sweeps, in cycles (no threads, no clock). */
class AgentScheduleTest {
    private final List<Throwable> errors = new ArrayList<>();

    /** Counts its visits; does {@code work} units per visit while {@code work > 0}. */
    private static final class Counting implements ProgressAgent {
        final String name;
        int visits;
        int work;
        RuntimeException toThrow;

        Counting(String name) {
            this.name = name;
        }

        @Override
        public int doWork(long nowNs) {
            visits++;
            if (toThrow != null) {
                throw toThrow;
            }
            return work;
        }

        @Override
        public String roleName() {
            return name;
        }
    }

    private int run(AgentSchedule s, long nowNs, int cycles) {
        int work = 0;
        for (int i = 0; i < cycles; i++) {
            work += s.run(nowNs, errors::add);
        }
        return work;
    }

    @Test
    void anAgentThatDidNotOptInIsVisitedEveryCycleEvenWhenIdle() {
        AgentSchedule s = new AgentSchedule(2, 1, 0);
        Counting busy = new Counting("busy");
        busy.work = 1;
        Counting idle = new Counting("idle");
        s.add(busy);
        s.add(idle);
        run(s, 0, 100);
        assertEquals(100, idle.visits);
        assertFalse(s.isCold(idle));
    }

    @Test
    void aSignalDrivenAgentTurnsColdAndABusyCycleSkipsItUntilTheRotationReachesIt() {
        AgentSchedule s = new AgentSchedule(4, 1, Long.MAX_VALUE);
        Counting busy = new Counting("busy");
        busy.work = 1;
        s.add(busy);
        List<Counting> idle = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Counting c = new Counting("idle" + i);
            idle.add(c);
            s.add(c).signalDriven();
        }
        // hot for 4 idle visits (plus rotation visits among them), then cold
        run(s, 0, 10);
        idle.forEach(c -> assertTrue(s.isCold(c), c.name));
        idle.forEach(c -> c.visits = 0);
        // 11 agents, 10 of them cold, one rotated to per cycle: each cold one once per 10 cycles
        run(s, 0, 100);
        idle.forEach(c -> assertEquals(10, c.visits, c.name));
        assertEquals(110, busy.visits);
    }

    @Test
    void aSignalBringsAColdAgentBackForTheNextCycleAndItStaysHotWhileItWorks() {
        AgentSchedule s = new AgentSchedule(2, 1, Long.MAX_VALUE);
        Counting busy = new Counting("busy");
        busy.work = 1;
        s.add(busy);
        List<Counting> others = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Counting c = new Counting("other" + i);
            others.add(c);
            s.add(c).signalDriven();
        }
        Counting target = new Counting("target");
        ProgressEngine.Registration r = s.add(target);
        r.signalDriven();
        run(s, 0, 5);
        assertTrue(s.isCold(target));
        int before = target.visits;
        target.work = 3;
        r.signal();
        assertEquals(1 + 3, s.run(0, errors::add));
        assertEquals(before + 1, target.visits);
        run(s, 0, 10);
        assertEquals(before + 11, target.visits);
        target.work = 0;
        run(s, 0, 2);
        assertTrue(s.isCold(target));
    }

    @Test
    void aCycleWithNoWorkVisitsEveryColdAgentAtMostOncePerIdleSweepPeriod() {
        AgentSchedule s = new AgentSchedule(1, 1, 1_000);
        List<Counting> idle = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Counting c = new Counting("idle" + i);
            idle.add(c);
            s.add(c).signalDriven();
        }
        run(s, 0, 3);
        idle.forEach(c -> c.visits = 0);
        // swept at 0 already: until 1000 ns later nothing visits them (the rotation runs in busy cycles only)
        run(s, 999, 5);
        idle.forEach(c -> assertEquals(0, c.visits, c.name));
        s.run(1_000, errors::add);
        // the sweep's visit: each once in this cycle
        idle.forEach(c -> assertEquals(1, c.visits, c.name));
    }

    /**
     * An idle loop (the engine waiting for the next message) runs only the agents visited every cycle and the hot
     * ones: a cold agent is left to the idle sweep, so the loop that polls for arrivals stays short. A busy cycle
     * rotates to one cold agent as before.
     */
    @Test
    void theRotationRunsInBusyCyclesOnly() {
        AgentSchedule s = new AgentSchedule(2, 1, Long.MAX_VALUE);
        Counting poller = new Counting("poller");
        s.add(poller);
        Counting waiting = new Counting("waiting");
        s.add(waiting).signalDriven();
        run(s, 0, 4);
        assertTrue(s.isCold(waiting));
        waiting.visits = 0;
        run(s, 0, 100);
        assertEquals(0, waiting.visits, "idle cycles left the cold agent alone");
        poller.work = 1;
        run(s, 0, 3);
        assertEquals(3, waiting.visits, "each busy cycle rotated to it");
    }

    @Test
    void withAZeroSweepPeriodEveryIdleCycleVisitsEveryAgentAsBefore() {
        AgentSchedule s = new AgentSchedule(1, 1, 0);
        List<Counting> idle = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Counting c = new Counting("idle" + i);
            idle.add(c);
            s.add(c).signalDriven();
        }
        run(s, 0, 50);
        idle.forEach(c -> assertEquals(50, c.visits, c.name));
    }

    @Test
    void moreSignalsThanTheQueueHoldsAreNotLost() {
        AgentSchedule s = new AgentSchedule(1, 1, Long.MAX_VALUE);
        Counting busy = new Counting("busy");
        busy.work = 1;
        s.add(busy);
        List<Counting> agents = new ArrayList<>();
        List<ProgressEngine.Registration> regs = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            Counting c = new Counting("a" + i);
            agents.add(c);
            ProgressEngine.Registration r = s.add(c);
            r.signalDriven();
            regs.add(r);
        }
        run(s, 0, 3);
        agents.forEach(c -> c.visits = 0);
        regs.forEach(ProgressEngine.Registration::signal);
        s.run(0, errors::add);
        agents.forEach(c -> assertTrue(c.visits >= 1, c.name));
    }

    @Test
    void aRemovedAgentIsNotVisitedEvenWhenHotOrSignalled() {
        AgentSchedule s = new AgentSchedule(4, 1, 0);
        Counting a = new Counting("a");
        a.work = 1;
        ProgressEngine.Registration r = s.add(a);
        r.signalDriven();
        run(s, 0, 3);
        int visits = a.visits;
        assertTrue(s.remove(a));
        r.signal();
        run(s, 0, 5);
        assertEquals(visits, a.visits);
        assertEquals(0, s.size());
        assertFalse(s.remove(a));
    }

    @Test
    void anAgentThatThrowsIsReportedAndKeepsItsPlace() {
        AgentSchedule s = new AgentSchedule(4, 1, 0);
        Counting bad = new Counting("bad");
        bad.toThrow = new IllegalStateException("boom");
        Counting good = new Counting("good");
        s.add(bad);
        s.add(good);
        run(s, 0, 3);
        assertEquals(3, errors.size());
        errors.forEach(e -> assertEquals("boom", e.getMessage()));
        assertEquals(3, good.visits);
        assertEquals(3, bad.visits);
    }

    @Test
    void badParametersNameTheValue() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new AgentSchedule(0, 1, 0)).getMessage().contains("coldAfter (0)"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new AgentSchedule(1, 0, 0)).getMessage().contains("rotationSlice (0)"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new AgentSchedule(1, 1, -1)).getMessage().contains("idleSweepNs (-1)"));
        AgentSchedule s = new AgentSchedule(1, 1, 0);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> s.isCold(new Counting("x"))).getMessage().contains("x is not scheduled"));
    }
}
