package io.rdmaflux.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.rsocket.test.LeaksTrackingByteBufAllocator;
import io.rsocket.test.TransportTest;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RSocket's own transport test kit ({@code io.rsocket:rsocket-test}, {@link TransportTest}: 19 tests) over
 * this transport, on nodes a subclass opens once per class. Before each test it checks that the kit's
 * leak-tracking allocators are the ones the transports were given (they are only with Netty's leak
 * detection at {@code advanced} or above, set in this module's surefire {@code argLine}), so the kit's
 * leak check after each test covers every frame this transport allocates.
 */
abstract class RdmaTransportKit implements TransportTest {
    private TransportPair<?, ?> pair;
    private final List<ByteBufAllocator> given = new ArrayList<>();

    /** The nodes of the subclass. */
    abstract KitNodes nodes();

    @BeforeEach
    void createPair() {
        KitNodes nodes = nodes();
        pair = new TransportPair<>(
            () -> nodes.bindAddress,
            (address, server, alloc) -> {
                given.add(alloc);
                return RdmaClientTransport.create(nodes.client, server.address()).allocator(alloc);
            },
            (address, alloc) -> {
                given.add(alloc);
                return RdmaServerTransport.create(nodes.server, address).allocator(alloc);
            });
        assertEquals(ResourceLeakDetector.Level.ADVANCED, ResourceLeakDetector.getLevel(),
            "run with -Dio.netty.leakDetection.level=advanced (this module's surefire argLine) or the kit's leak check is void");
        assertEquals(2, given.size(), "both transports built");
        given.forEach(a -> assertTrue(a instanceof LeaksTrackingByteBufAllocator, "kit allocator given: " + a));
    }

    /**
     * Each step's bound; the kit also sets RSocket's keep-alive lifetime to a tenth of it (30 s), which a
     * progress thread kept off the CPU on a loaded 2-core host must not reach. 5 min: at a load average of
     * 20-28 on 2 cores {@code requestChannel200_000} (23-66 s at lower loads) once took more than 2 min.
     */
    @Override
    public Duration getTimeout() {
        return Duration.ofMinutes(5);
    }

    @Override
    public TransportPair getTransportPair() {
        return pair;
    }
}
