package io.rdmaflux.core.reorder;

import io.rdmaflux.core.RdmaMessage;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;

import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * PSN/ESN reordering as a Reactor operator (seed 000 &sect;5.2, seed 001 &sect;4.5), usable on its
 * own: {@code flux.transform(Reorder.byPsn(Item::psn, 0, 64))}.
 *
 * <p>The operator keeps the ESN and a bounded out-of-order queue ({@link ReorderWindow}); it emits
 * items in PSN order. It requests from upstream what downstream demand needs plus what it takes
 * to fill the holes below queued items, never more than the window. A PSN at or beyond
 * {@code ESN + windowSize}, a duplicate, or a PSN below the ESN terminates the flux with
 * {@link ReorderWindowOverflowException} and cancels upstream.
 *
 * <p><b>Discard support:</b> items queued in the operator when it is cancelled or terminates with
 * an error are passed to the discard hook ({@code Flux.doOnDiscard}). {@link #messagesByPsn(int)}
 * installs a hook that releases discarded {@link RdmaMessage}s.
 */
public final class Reorder {
    private Reorder() {
    }

    /**
     * Reorders by the PSN that {@code psnOf} extracts.
     *
     * @param firstPsn   the PSN of the first item
     * @param windowSize in [1, 2^24]; how far ahead of the ESN an item may arrive
     * @throws IllegalArgumentException if windowSize is out of range
     */
    public static <T> Function<Flux<T>, Flux<T>> byPsn(ToIntFunction<? super T> psnOf, int firstPsn, int windowSize) {
        if (windowSize < 1 || windowSize > (1 << 24)) {
            throw new IllegalArgumentException("windowSize in [1, 16777216] required but it was " + windowSize
                + "; give the most items that may arrive ahead of the next expected PSN (at least 1)");
        }
        return flux -> new FluxReorderByPsn<>(flux, psnOf, firstPsn, windowSize);
    }

    /** Reorders {@link RdmaMessage}s by {@link RdmaMessage#psn()} from PSN 0, releasing discarded messages. */
    public static Function<Flux<RdmaMessage>, Flux<RdmaMessage>> messagesByPsn(int windowSize) {
        Function<Flux<RdmaMessage>, Flux<RdmaMessage>> op = byPsn(RdmaMessage::psn, 0, windowSize);
        return flux -> op.apply(flux).doOnDiscard(RdmaMessage.class, Reorder::releaseQuietly);
    }

    /** Same as {@link #byPsn} for a {@link Publisher}. */
    public static <T> Flux<T> byPsn(Publisher<T> source, ToIntFunction<? super T> psnOf, int firstPsn, int windowSize) {
        return Flux.from(source).transform(byPsn(psnOf, firstPsn, windowSize));
    }

    private static void releaseQuietly(RdmaMessage m) {
        if (m.refCnt() > 0) {
            m.release();
        }
    }
}
