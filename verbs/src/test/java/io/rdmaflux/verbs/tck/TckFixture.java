package io.rdmaflux.verbs.tck;

import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.Port;
import io.rdmaflux.verbs.PortState;

/**
 * What {@link ProviderTck} needs from a provider under test: two devices that can reach each other
 * (on two providers, i.e. two hosts, or two devices of one provider), and a way to drive progress
 * and time.
 *
 * <p>A virtual-time fixture ({@link #virtualTime()} true) runs its providers in INVOKER mode on one
 * virtual clock: {@link #progress()} runs one pass of every provider at the current virtual time and
 * {@link #advanceNs(long)} moves the clock. A real-time fixture (hardware, or the soft provider in
 * DEDICATED mode) returns 0 from {@code progress()} and lets {@code advanceNs} spin or yield until
 * that much real time passed; tests that need exact timing are skipped for it.
 */
public interface TckFixture extends AutoCloseable {
    /** The requester side's device ("host A"). */
    Device deviceA();

    /** The responder side's device ("host B"). */
    Device deviceB();

    /** One progress pass of every provider involved; returns the work done. */
    int progress();

    /** Moves time forward by {@code ns}. */
    void advanceNs(long ns);

    /** Current time of the providers' clock, ns. */
    long nowNs();

    /** Whether time only moves through {@link #advanceNs(long)} (deterministic shaping and timer tests). */
    boolean virtualTime();

    /** Whether {@link #setPortState} works (fault injection). */
    default boolean canSetPortState() {
        return false;
    }

    /** Takes a port down or up. @throws UnsupportedOperationException when {@link #canSetPortState()} is false */
    default void setPortState(Port port, PortState state) {
        throw new UnsupportedOperationException("this fixture cannot change port state");
    }

    /** Whether {@link #setRail} works (per-port rail model). */
    default boolean canSetRail() {
        return false;
    }

    /**
     * Replaces one port's rail model (bandwidth, latency, MTU, loss, UD faults).
     *
     * @throws UnsupportedOperationException when {@link #canSetRail()} is false
     */
    default void setRail(Port port, io.rdmaflux.verbs.soft.RailConfig rail) {
        throw new UnsupportedOperationException("this fixture has no rail model");
    }

    /** Asserts the provider under test leaked nothing (called after {@link #close()}). */
    void assertNoLeaks();

    /** Closes the providers. */
    @Override
    void close();
}
