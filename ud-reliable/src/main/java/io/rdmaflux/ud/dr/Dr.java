package io.rdmaflux.ud.dr;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * DR-style acknowledgement as Reactor operators over any lossy datagram path (seed 003 &sect;4.2), usable on
 * its own like {@code Reorder.byPsn}:
 *
 * <pre>{@code
 * DrLink link = Dr.link(DrConfig.DEFAULTS, 1, 2, "peer-b", 1, udpSink, udpDatagrams, Schedulers.single());
 * Mono<Void> sent = Flux.fromIterable(payloads).as(Dr.sendOver(link));   // completes when acknowledged
 * Flux<byte[]> in = link.receive();                                             // in order, each once
 * }</pre>
 *
 * <p>The sink may lose, duplicate, reorder and corrupt datagrams; the link restores a reliable ordered stream
 * or fails both directions with an {@code RdmaTransportException} naming the peer, rails and retries.
 */
public final class Dr {
    private Dr() {
    }

    /**
     * Opens a link and subscribes to {@code source} (unbounded: datagrams are lossy anyway, and each is handled
     * at once).
     *
     * @param localId  this side's id, carried in every datagram
     * @param peerId   the peer's id; datagrams of any other source are dropped (counted)
     * @param peerName how errors name the peer
     * @param rails    rails of the path, in [1, 64]: {@code sink} is given the rail of each datagram, {@code source}
     *                 says the rail of each one
     * @param timers   where the link's timers run
     * @param clockNs  the time, ns (a virtual clock in tests; {@code System::nanoTime} otherwise)
     * @throws IllegalArgumentException if {@code rails} is out of range
     */
    public static DrLink link(DrConfig config, int localId, int peerId, String peerName, int rails, DatagramSink sink,
                              Publisher<Datagram> source, Scheduler timers, LongSupplier clockNs) {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(timers, "timers");
        Objects.requireNonNull(clockNs, "clockNs");
        DrEndpoint ep = new DrEndpoint(config, localId, peerId, peerName, rails, sink, clockNs.getAsLong());
        DrLink link = new DrLink(ep, config.maxMessageBytes(), timers, clockNs);
        link.start(source);
        return link;
    }

    /** {@link #link(DrConfig, int, int, String, int, DatagramSink, Publisher, Scheduler, LongSupplier)} on {@code System::nanoTime}. */
    public static DrLink link(DrConfig config, int localId, int peerId, String peerName, int rails, DatagramSink sink,
                              Publisher<Datagram> source, Scheduler timers) {
        return link(config, localId, peerId, peerName, rails, sink, source, timers, System::nanoTime);
    }

    /** The send side as an operator: {@code messages.as(Dr.sendOver(link))}. */
    public static Function<Flux<byte[]>, Mono<Void>> sendOver(DrLink link) {
        Objects.requireNonNull(link, "link");
        return link::send;
    }
}
