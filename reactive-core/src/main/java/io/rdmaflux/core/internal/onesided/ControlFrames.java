package io.rdmaflux.core.internal.onesided;

import io.rdmaflux.core.channel.Channel;
import io.rdmaflux.core.frame.ControlFrameEncoder;
import io.rdmaflux.core.frame.FrameType;

import java.util.ArrayDeque;

/**
 * The one-sided control frames waiting for a send slot, sent in order. A frame for "any rail" (the
 * exposures, revocations and epoch acknowledgements) goes on the lowest-numbered rail that carries
 * one-sided work, so the frames of one region arrive in the order they were sent while that rail lives;
 * a frame for one rail (an epoch's synchronization message) waits for that rail and is dropped if the
 * rail fails (the epoch sends a new generation, see {@link AccessEpochs}).
 *
 * <p><b>Concurrency:</b> progress thread only.
 */
final class ControlFrames {
    /** {@link #send}: any rail. */
    static final int ANY_RAIL = -1;

    private record Pending(int rail, FrameType type, ControlFrameEncoder encoder, Runnable onSent) {
    }

    private final Channel[] channels;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();

    ControlFrames(Channel[] channels) {
        this.channels = channels;
    }

    /** Queues a frame for {@code rail} ({@link #ANY_RAIL}: the lowest usable); {@code onSent} runs once it went. */
    void send(int rail, FrameType type, ControlFrameEncoder encoder, Runnable onSent) {
        pending.add(new Pending(rail, type, encoder, onSent));
    }

    /** Sends what can go now, in order; a frame that cannot go yet keeps the ones after it waiting. @return frames sent */
    int flush() {
        int sent = 0;
        while (!pending.isEmpty()) {
            Pending p = pending.peek();
            int rail = p.rail == ANY_RAIL ? controlRail() : p.rail;
            if (rail < 0) {
                return sent;
            }
            Channel ch = channels[rail];
            if (ch.isFailed()) {
                // only a one-rail frame: the epoch that queued it sends a new generation on the survivors
                pending.poll();
                continue;
            }
            if (!ch.sendOneSidedControl(p.type, p.encoder)) {
                return sent;
            }
            pending.poll();
            p.onSent.run();
            sent++;
        }
        return sent;
    }

    /** The lowest-numbered rail whose channel carries one-sided work and has not failed, or -1. */
    int controlRail() {
        for (int r = 0; r < channels.length; r++) {
            if (channels[r].carriesOneSided() && !channels[r].isFailed()) {
                return r;
            }
        }
        return -1;
    }

    int pending() {
        return pending.size();
    }

    void clear() {
        pending.clear();
    }
}
