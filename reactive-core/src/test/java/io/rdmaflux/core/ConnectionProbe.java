package io.rdmaflux.core;

import io.rdmaflux.core.internal.rc.RcSubchannel;
import reactor.core.publisher.MonoSink;

/**
 * Test-only access to the internals of a connection: the one place in the tests that casts an
 * {@link RdmaConnection} to {@link DefaultRdmaConnection}. Each method delegates to the package-private
 * accessor of the same name on the connection's {@link ConnectionDiagnostics} ({@link #name} to the
 * connection's own, {@link #channel} to {@code subchannel}), so the tests survive a change of how the
 * connection is put together as long as those accessors stay.
 *
 * <p>Like the accessors, most of these read progress-thread state without synchronization: call them on
 * the progress thread, or in INVOKER mode between duty cycles (as the tests do), not while another thread
 * drives the connection.
 */
final class ConnectionProbe {
    private ConnectionProbe() {
    }

    private static DefaultRdmaConnection of(RdmaConnection c) {
        return (DefaultRdmaConnection) c;
    }

    /** The connection's name, which prefixes its error messages and its {@link #describe} line. */
    static String name(RdmaConnection c) {
        return of(c).name();
    }

    /** Protocol state for diagnostics (progress thread; tests). */
    static String describe(RdmaConnection c) {
        return of(c).diagnostics().describe();
    }

    /** Packed DATA frames sent over every rail (progress thread; tests). */
    static long packedFramesSent(RdmaConnection c) {
        return of(c).diagnostics().packedFramesSent();
    }

    /** Messages of packed frames taken back from the send buffers of failed rails to be sent again (progress thread; tests). */
    static long packedMessagesTakenBack(RdmaConnection c) {
        return of(c).diagnostics().packedMessagesTakenBack();
    }

    /** Rails that failed while the connection went on over the others (progress thread; tests). */
    static int railFailures(RdmaConnection c) {
        return of(c).diagnostics().railFailures();
    }

    /** Message credits the peer granted and this side has not used (progress thread; tests). */
    static long sendCreditsHeld(RdmaConnection c) {
        return of(c).diagnostics().sendCreditsHeld();
    }

    /** Pooled views created so far: the most packed messages held at once (progress thread; tests). */
    static int viewsCreated(RdmaConnection c) {
        return of(c).diagnostics().viewsCreated();
    }

    /**
     * Receive buffers held plus reassembled and rendezvous messages not released: what a leak check expects
     * to be 0 (progress thread; tests).
     */
    static int buffersOutstanding(RdmaConnection c) {
        return of(c).diagnostics().buffersOutstanding();
    }

    /**
     * The live RC subchannel of {@code rail}, via {@code ConnectionDiagnostics.subchannel(rail)} (progress
     * thread; tests). Unlike the elements of {@link RdmaConnection#subchannels()}, which need not be
     * {@code RcSubchannel}s, this is the object that sends and receives, with its counters and resources.
     */
    static RcSubchannel channel(RdmaConnection c, int rail) {
        return of(c).diagnostics().subchannel(rail);
    }

    /** A new {@link SendOp} of the connection completing {@code sink}, its message queue holding {@code capacity}. */
    static SendOp newSendOp(RdmaConnection c, MonoSink<Void> sink, int capacity) {
        return new SendOp(of(c), sink, capacity);
    }

    /** Zero-credit probes the connection sent ({@link CreditProbe}); progress thread or between INVOKER duty cycles. */
    static long creditProbes(RdmaConnection c) {
        return of(c).diagnostics().creditProbes();
    }
}
