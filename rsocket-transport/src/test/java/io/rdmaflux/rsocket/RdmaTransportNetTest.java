package io.rdmaflux.rsocket;

import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.verbs.ThreadingMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * RSocket's transport kit on the IP fabric over 127.0.0.1 (RC over TCP sockets), 1 rail, both nodes on
 * the SHARED progress thread, which blocks in the providers' selector when idle.
 */
class RdmaTransportNetTest extends RdmaTransportKit {
    private static KitNodes nodes;

    @BeforeAll
    static void open() {
        nodes = KitNodes.net(1, ThreadingMode.SHARED, b -> b.idleStrategy(ProgressIdleStrategy.lowLatency()));
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
