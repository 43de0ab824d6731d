package io.rdmaflux.rsocket;

import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.verbs.ThreadingMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * RSocket's transport kit on the in-JVM fabric, 1 rail. Both nodes run on the JVM's SHARED progress
 * thread (no hand-over between cores for a frame and its reply, the best same-JVM setup on 2 cores)
 * with the request/response idle strategy, which keeps the thread hot for a round trip.
 */
class RdmaTransportMemTest extends RdmaTransportKit {
    private static KitNodes nodes;

    @BeforeAll
    static void open() {
        nodes = KitNodes.mem(1, ThreadingMode.SHARED, b -> b.idleStrategy(ProgressIdleStrategy.lowLatency()));
    }

    @AfterAll
    static void closeNodes() {
        nodes.close();
    }

    @Override
    KitNodes nodes() {
        return nodes;
    }
}
