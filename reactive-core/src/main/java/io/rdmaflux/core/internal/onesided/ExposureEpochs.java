package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.frame.EpochAckFrameCodec;
import io.rdmaflux.core.frame.FrameType;
import io.rdmaflux.core.onesided.Epoch;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

import java.util.HashMap;
import java.util.Map;

/**
 * The target's side of the peer's access epochs (seed 002 &sect;3.2, the exposure epoch): it collects
 * the synchronization messages of an epoch, one per subchannel of its rail mask, and once it holds them
 * all (of the highest generation seen) every put of the epoch is in memory, since RC placed each rail's
 * WRITEs before its synchronization message: it announces the {@link Epoch} and acknowledges it. A
 * synchronization message of an epoch already announced (a generation re-sent after a rail failed) is
 * acknowledged again, so a lost acknowledgement is replaced.
 *
 * <p><b>Concurrency:</b> progress thread only; {@link #epochs()} any thread.
 */
final class ExposureEpochs {
    private static final class Partial {
        int generation = -1;
        long mask;
        long got;
    }

    private final ControlFrames control;
    private final Sinks.Many<Epoch> announced = Sinks.many().unicast().onBackpressureBuffer();
    private final Map<Integer, Partial> partial = new HashMap<>();
    private int lastAnnounced = -1;
    private long epochsAnnounced;

    ExposureEpochs(ControlFrames control) {
        this.control = control;
    }

    Flux<Epoch> epochs() {
        return announced.asFlux();
    }

    /** An EPOCH_SYNC arrived on {@code rail}. @return a protocol violation to report, or null */
    @org.jspecify.annotations.Nullable String onSync(int rail, int epoch, long mask, int generation, int puts, long bytesPut) {
        if ((mask & (1L << rail)) == 0) {
            return "EPOCH_SYNC of epoch " + epoch + " arrived on rail " + rail + ", which its rail mask 0x" + Long.toHexString(mask)
                + " does not name";
        }
        if (epoch <= lastAnnounced) {
            ack(epoch);
            return null;
        }
        Partial p = partial.computeIfAbsent(epoch, e -> new Partial());
        if (generation < p.generation) {
            return null;
        }
        if (generation > p.generation) {
            p.generation = generation;
            p.mask = mask;
            p.got = 0;
        }
        p.got |= 1L << rail;
        if ((p.got & p.mask) == p.mask) {
            partial.remove(epoch);
            lastAnnounced = epoch;
            epochsAnnounced++;
            announced.tryEmitNext(new Epoch(epoch, puts, bytesPut, p.mask));
            ack(epoch);
        }
        return null;
    }

    private void ack(int epoch) {
        control.send(ControlFrames.ANY_RAIL, FrameType.EPOCH_ACK, (b, off, credits) -> EpochAckFrameCodec.encode(b, off, epoch, credits),
            () -> { });
    }

    void end() {
        announced.tryEmitComplete();
        partial.clear();
    }

    long epochsAnnounced() {
        return epochsAnnounced;
    }
}
