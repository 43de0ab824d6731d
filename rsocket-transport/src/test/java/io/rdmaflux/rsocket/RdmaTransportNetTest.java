package io.rdmaflux.rsocket;

import io.rdmaflux.core.engine.ProgressIdleStrategy;
import io.rdmaflux.verbs.ThreadingMode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * RSocket's transport kit on the IP fabric over 127.0.0.1 (RC over TCP sockets), 1 rail, both nodes on
 * the SHARED progress thread, which blocks in the providers' selector when idle.
 *
 * <p>{@code requestChannel256} (1,024 channels of 256 payloads each way, 12 at a time, {@code limitRate(8)}:
 * some 90,000 request-n round trips) runs here only with {@code -Drdmaflux.rsocket.fullKit=true}: on a
 * loaded 2-core host it took 420 s (RSocket's own local transport 108 s, this transport on the mem fabric
 * 85-225 s), its time being the scheduling of the kit's 12 threads and the progress thread, and the
 * DuplexConnection code it exercises is the same as on the mem fabric, where it always runs.
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
    @Test
    @EnabledIfSystemProperty(named = "rdmaflux.rsocket.fullKit", matches = "true",
        disabledReason = "420 s on a loaded 2-core host; runs on the mem fabric always (see the class comment)")
    public void requestChannel256() {
        super.requestChannel256();
    }

    @Override
    KitNodes nodes() {
        return nodes;
    }
}
