package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.VerbsException;

/**
 * How frames move between soft NICs: the one pluggable part of the soft provider. Everything that
 * makes a QP a QP (state machine, PSNs, acknowledgement, RNR and transport retry, rkey/bounds/access
 * checks on the responder, data placement, completions, flush, the rail model) lives in the NIC
 * ({@link SoftDevice}, {@link SoftQueuePair}); a transport only carries {@link SoftFrame}s from
 * one NIC port to another. {@link MemTransport} ({@code mem://}, in-JVM) is one implementation; an
 * IP transport ({@code net://}: UD over UDP, RC over TCP) is another.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Attach.</b> Each NIC calls {@link #attach(SoftDevice)} once when it opens and
 *       {@link Attachment#bind(SoftPort)} once per port, which returns the port's
 *       {@link PortAddress} ({@code fabric://host:port}); that address is what peers put in
 *       {@code QpEndpoint}s and address handles.</li>
 *   <li><b>Resolve.</b> {@link Attachment#resolve(PortAddress)} turns a peer address into a
 *       {@link Route} once (setup path; may throw a {@link VerbsException} naming the address when
 *       the fabric knows it cannot be reached). A route to a port that later goes away silently
 *       drops frames: RC requesters then fail with RETRY_EXC_ERR, as on a real fabric. A transport
 *       that knows a route is gone for good (a connection-oriented one whose connection closed)
 *       says so with {@link SoftDevice#routeBroken}, on the NIC's engine thread, so that QPs which
 *       only receive fail too.</li>
 *   <li><b>Transmit.</b> {@link Attachment#transmit(SoftFrame)} is called only by the NIC's engine
 *       thread, never blocks, and takes ownership of the frame: the transport must eventually
 *       {@link SoftFrame#release()} it (after delivery, after serializing it onto a wire, or when
 *       dropping it). Frames for one route must arrive in transmission order (RC relies on it; the
 *       NIC itself reorders UD datagrams when a rail asks for it). The frame's payload is a gather
 *       list of {@code (ByteBuffer, offset, length)} entries; for RC requests and READ responses it
 *       points into registered memory of the sending NIC, which stays valid until the request is
 *       acknowledged, so an in-JVM transport may hand it over by reference (one copy, at the
 *       responder) while a wire transport copies it out during {@code transmit}. UD payloads are
 *       already copied into the frame's own buffer.</li>
 *   <li><b>Deliver.</b> {@link Attachment#poll(long, int)} is called by the receiving NIC's engine
 *       thread; it hands every frame that has arrived to {@link SoftDevice#onFrameArrived(SoftFrame, long)}
 *       (up to the limit), in arrival order, and must not call it from any other thread. When that
 *       returns true the transport releases the frame (it may collect releases and return them in
 *       one batch); when false the NIC kept the frame (held until its arrival time) and will release
 *       it itself. A wire transport builds received frames from its own
 *       pool ({@link SoftDevice#claimFrame()}) with a single-entry gather list over its receive
 *       buffer.</li>
 *   <li><b>Time.</b> {@link SoftFrame#deliverAtNs} is set by the sending NIC from its own clock
 *       (departure after bandwidth shaping, plus the rail's one-way latency). The receiving NIC holds
 *       a frame until its own clock reaches that time. A transport between hosts whose clocks
 *       differ must rebase it on arrival (e.g. {@code arrival + (deliverAtNs - sentAtNs)}).</li>
 * </ul>
 *
 * <p><b>Concurrency:</b> {@code attach}, {@code bind}, {@code resolve} and {@code close} are
 * thread-safe setup calls; {@code transmit} may be called by several NICs' engine threads at once
 * (each for its own frames); {@code poll} by one NIC's engine thread.
 */
public interface FrameTransport {
    /** The fabric name that appears in addresses, e.g. {@code mem} or {@code net}. */
    String fabric();

    /** Attaches a NIC. @throws VerbsException if the NIC's name is already attached */
    Attachment attach(SoftDevice nic);

    /** One NIC's view of the transport. */
    interface Attachment extends AutoCloseable {
        /** Binds one port of the NIC and returns its address. */
        PortAddress bind(SoftPort port);

        /**
         * Resolves a peer port address.
         *
         * @throws VerbsException if the address is not of this fabric or cannot exist on it
         */
        Route resolve(PortAddress address);

        /**
         * Sends a frame along {@link SoftFrame#route}; takes ownership; never blocks. A transport may
         * hold frames back until {@link #flush()} to hand them over in batches.
         */
        void transmit(SoftFrame frame);

        /**
         * Hands over whatever {@link #transmit} held back; the NIC calls it at the end of every engine
         * pass. The default holds nothing back.
         */
        default void flush() {
        }

        /**
         * Hands arrived frames to the NIC.
         *
         * @param nowNs the NIC's current time
         * @param limit most frames to hand over
         * @return frames handed over
         */
        int poll(long nowNs, int limit);

        /**
         * Blocks the NIC's engine thread until a frame may have arrived, {@link #wakeup()} is called, or
         * about {@code timeoutNs} passed (see {@link io.rdmaflux.verbs.RdmaProvider#awaitWork(long)}).
         * Called only after an engine pass that did no work. The default cannot wait: it returns false
         * at once (the in-JVM and IP transports override it).
         *
         * @return true if it waited (possibly cut short), false if it returned at once without waiting
         */
        default boolean awaitWork(long timeoutNs) {
            return false;
        }

        /** Ends an {@link #awaitWork} in progress, or makes the next one return at once; any thread. */
        default void wakeup() {
        }

        /**
         * The RC QP {@code localQpn}, connected over {@code route} to the peer's QP {@code remoteQpn},
         * was destroyed; called on the NIC's engine thread, in its first pass after the destroy, before
         * that pass transmits anything (so a new QP, even one reusing the QPN, never sees state of the old
         * one). A transport that holds a resource per route (a connection) lets it go here, in an orderly
         * way the peer can tell from a dead host: the peer must not report its own route broken
         * ({@link SoftDevice#routeBroken}) for it. Frames already handed to {@link #transmit} for the
         * route (the last acknowledgements) should still be delivered. Not called when the NIC closes
         * ({@link #close()} ends everything at once, as a host that dies). The default holds nothing
         * per route.
         */
        default void releaseRoute(Route route, int localQpn, int remoteQpn) {
        }

        /**
         * An RC QP on {@code route} saw its ACK timer expire (no acknowledgement for its retry timeout) and
         * is about to retransmit from its oldest unacknowledged request (go-back-N); called on the NIC's
         * engine thread at NIC time {@code nowNs}, before those retransmissions are handed to
         * {@link #transmit}, once per expiry. A
         * transport that carries the route over a connection with a retransmission timer of its own (TCP,
         * which backs off exponentially while a link is down and so may stay silent long after the link is
         * back) may replace that connection here, so the retransmissions leave at once on a fresh one. The
         * default does nothing (a transport that loses frames outright needs nothing but the QP's retry).
         */
        default void routeStalled(Route route, long nowNs) {
        }

        /**
         * A memory region of this NIC was deregistered: called once, on the deregistering thread (any
         * application thread, possibly several at once), after the NIC's key table dropped its keys (from
         * then on a frame naming its rkey is refused with REM_ACCESS_ERR). A transport that carries RDMA
         * WRITEs as one-sided operations of its own (the {@code ucx} provider's {@code ucp_put}), and so
         * handed the region's rkey to peers ({@link SoftDevice#remoteRegion}), revokes it here, deferring
         * work on its wire objects to its engine thread (waking it with {@link #wakeup()}). To give
         * {@code ibv_dereg_mr}'s guarantee (once it returns, no remote access to the region succeeds) it
         * may block the deregistering thread, bounded, until its peers confirmed the revocation; it must
         * never block the NIC's engine thread (which would have to deliver those confirmations) nor a
         * closing device ({@link SoftDevice#isClosing()}). Must not throw (an exception would reach the
         * deregistering caller). The default does nothing.
         */
        default void regionDeregistered(io.rdmaflux.verbs.MemoryRegion region) {
        }

        /**
         * As {@link #regionDeregistered} for {@link io.rdmaflux.verbs.MemoryRegion#deregisterAsync()}, but
         * never blocks: returns a stage completing once no peer's one-sided operation with the region's
         * rkey can reach its memory (completed by the engine thread, or at close; never exceptionally).
         * Must not throw. The default calls {@link #regionDeregistered} and returns a completed stage, right
         * for a transport whose hook does nothing.
         */
        default java.util.concurrent.CompletionStage<Void> regionDeregisteredAsync(io.rdmaflux.verbs.MemoryRegion region) {
            regionDeregistered(region);
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }

        /** Unbinds every port; frames later sent to them are dropped. Idempotent. */
        @Override
        void close();
    }
}
