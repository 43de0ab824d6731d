package io.rdmaflux.rsocket;

import io.rdmaflux.verbs.ThreadingMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** RSocket's transport kit on the in-JVM fabric, both nodes on the JVM's SHARED progress thread, 1 rail. */
class RdmaTransportMemTest extends RdmaTransportKit {
    private static KitNodes nodes;

    @BeforeAll
    static void open() {
        nodes = KitNodes.mem(1, ThreadingMode.SHARED, b -> b);
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
