package io.rdmaflux.core.tck;

import io.rdmaflux.core.RdmaConnection;
import io.rdmaflux.core.RdmaNode;

import java.util.function.BooleanSupplier;

/**
 * A connected client/server pair for one {@link ConnectionTck} test, built by the concrete suite's
 * {@link ConnectionTck#openPair(PairOptions)}. It hides how time passes: a virtual-time pair drives
 * the nodes' duty cycles and advances its clock inside {@link #await} and {@link #settle}; a
 * real-time pair waits for its progress threads, bounded. Everything a test does to the connections
 * goes through the public API, so the same test runs over every fabric, threading mode and channel
 * kind.
 *
 * <p><b>Concurrency:</b> call from the test thread. In real time the connections' signals come on the
 * nodes' progress threads; helpers that record them call {@link #signal()} so an {@link #await} wakes at
 * once.
 */
public interface ConnectionTckFixture extends AutoCloseable {
    /** Which end of the pair. */
    enum Side { CLIENT, SERVER }

    /** The connecting side. */
    RdmaConnection client();

    /** The accepting side. */
    RdmaConnection server();

    RdmaNode clientNode();

    RdmaNode serverNode();

    default RdmaConnection connection(Side side) {
        return side == Side.CLIENT ? client() : server();
    }

    /** Rails of the connection (subchannels). */
    int rails();

    /**
     * Payload bytes one frame of the connection carries (the "MTU" a message fragments at), as the
     * public {@code Subchannel.maxFramePayloadBytes()} of rail 0 reported once connected.
     */
    int maxFramePayloadBytes();

    /** Whether time is virtual and the pair deterministic. */
    boolean virtualTime();

    /**
     * Makes progress until {@code done} holds.
     *
     * @throws AssertionError naming {@code what} and both connections' metrics when it does not hold
     *     within the pair's bound (progress passes in virtual time, a generous timeout in real time)
     */
    void await(String what, BooleanSupplier done);

    /**
     * Lets everything under way happen: in virtual time, duty cycles until nothing moves; in real time,
     * until neither connection's counters move across round trips of a probe connection between the
     * same two nodes (which the nodes' duty cycles serve together with the tested one). What a test
     * asserts as a bound after it must hold at all times anyway, so a real-time settle that returns
     * early can hide a violation but never invents one.
     */
    void settle();

    /** Whether {@code onClose()} of {@code side} has ended (completed or errored). */
    boolean closed(Side side);

    /** Wakes a real-time {@link #await}: a signal a test waits for arrived. */
    void signal();

    /** Whether {@link #failRail} is supported (a port can be taken down). */
    boolean supportsRailFailure();

    /**
     * Takes the port of {@code rail} (0-based) on {@code side} down, as a cable pulled. Any thread.
     *
     * @throws UnsupportedOperationException unless {@link #supportsRailFailure()}
     */
    void failRail(Side side, int rail);

    /**
     * Brings the port of {@code rail} on {@code side} back up after {@link #failRail} (the cable plugged in
     * again). A connection does not take back a rail it failed over from. Any thread.
     *
     * @throws UnsupportedOperationException unless {@link #supportsRailFailure()}
     */
    default void restoreRail(Side side, int rail) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " cannot take a port down or up");
    }

    /**
     * What the RC wire faults asked for by {@link PairOptions#railFaults()} did so far, over both sides
     * and every rail.
     *
     * @throws UnsupportedOperationException unless the suite {@link ConnectionTck#supportsRailFaults() supports rail faults}
     */
    default RailFaultCounters railFaultCounters() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " injects no RC wire faults");
    }

    /** What the UD fault model asked for by {@link PairOptions#railFaults()} did so far, over both sides and every rail. */
    default SoftRails.UdFaultCounters udFaultCounters() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " injects no UD wire faults");
    }

    /**
     * Closes both connections gracefully (aborting what does not close within the bound), checks that
     * neither node still holds a received message, then closes nodes and providers. The module's
     * {@code RdmaLeakCheckExtension} then checks buffers, soft-provider resources and threads.
     */
    @Override
    void close();
}
