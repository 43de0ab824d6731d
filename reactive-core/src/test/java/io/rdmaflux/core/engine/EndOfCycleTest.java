package io.rdmaflux.core.engine;

import io.rdmaflux.verbs.ProgressAgent;
import io.rdmaflux.verbs.ThreadingMode;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * {@link ProgressEngine#endOfCycle}: the agent runs once at the end of every duty cycle, after every other
 * agent, with the cycle's time; its work counts as the cycle's; an exception it throws goes to the error
 * handler and the next cycle runs it again; null removes it.
 */
class EndOfCycleTest {

    private static ProgressAgent agent(String name, List<String> log, int work) {
        return new ProgressAgent() {
            @Override
            public int doWork(long nowNs) {
                log.add(name + "@" + nowNs);
                return work;
            }

            @Override
            public String roleName() {
                return name;
            }
        };
    }

    @Test
    void runsAfterEveryAgentOncePerCycleWithTheCyclesTime() {
        List<String> log = new ArrayList<>();
        List<Throwable> errors = new ArrayList<>();
        long[] now = {100};
        ProgressEngine engine = new ProgressEngine("end-of-cycle", ThreadingMode.INVOKER, () -> now[0], NoOpIdleStrategy.INSTANCE, errors::add);
        try {
            engine.add(agent("a", log, 0));
            engine.endOfCycle(agent("end", log, 2));
            engine.add(agent("b", log, 0));
            engine.execute(() -> log.add("task"));
            assertEquals(1 + 2, engine.invoke(), "the task and the end agent's work");
            assertEquals(List.of("task", "a@100", "b@100", "end@100"), log);
            log.clear();
            now[0] = 200;
            assertEquals(2, engine.invoke());
            assertEquals(List.of("a@200", "b@200", "end@200"), log);

            RuntimeException boom = new IllegalStateException("boom");
            engine.endOfCycle(new ProgressAgent() {
                @Override
                public int doWork(long nowNs) {
                    throw boom;
                }

                @Override
                public String roleName() {
                    return "throws";
                }
            });
            log.clear();
            assertEquals(0, engine.invoke());
            assertEquals(List.of("a@200", "b@200"), log, "the others ran");
            assertEquals(1, errors.size());
            assertSame(boom, errors.get(0));

            engine.endOfCycle(null);
            log.clear();
            engine.invoke();
            assertEquals(List.of("a@200", "b@200"), log);
            assertEquals(1, errors.size(), "removed: it no longer runs");
        } finally {
            engine.close();
        }
    }
}
