package io.rdmaflux.rsocket;

import io.rdmaflux.verbs.ThreadingMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** RSocket's transport kit on the IP fabric over 127.0.0.1 (RC over TCP), one DEDICATED progress thread per node, 1 rail. */
class RdmaTransportNetTest extends RdmaTransportKit {
    private static KitNodes nodes;

    @BeforeAll
    static void open() {
        nodes = KitNodes.net(1, ThreadingMode.DEDICATED, b -> b);
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
