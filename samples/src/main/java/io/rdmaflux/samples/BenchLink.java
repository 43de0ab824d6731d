package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaConnection;

/** Both ends of one connection in this JVM, for the benchmarks: a sender (the connecting side) and a receiver. */
interface BenchLink extends AutoCloseable {
    /** The connecting side; its policy schedules what it sends over the rails. */
    RdmaConnection sender();

    /** The accepting side. */
    RdmaConnection receiver();

    /** The connecting side's node (one-sided benchmarks register their regions with it). */
    io.rdmaflux.core.RdmaNode senderNode();

    /** The accepting side's node. */
    io.rdmaflux.core.RdmaNode receiverNode();

    /** Closes both ends and everything under them. */
    @Override
    void close();
}
