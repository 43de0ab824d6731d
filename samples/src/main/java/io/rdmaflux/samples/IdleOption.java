package io.rdmaflux.samples;

import io.rdmaflux.core.engine.ProgressIdleStrategy;
import org.jspecify.annotations.Nullable;

/**
 * {@code bench --idle}: how a node's progress thread idles on the IP fabric. {@code low-latency} (the bench's
 * default) is {@link ProgressIdleStrategy#lowLatency()}: it keeps polling its streams for some 100 µs after the
 * last message, as MPI libraries poll, so a reply finds the thread awake instead of paying a wake-up from the
 * socket selector; {@code backoff} is the library's default, {@link ProgressIdleStrategy#backoff()}.
 */
enum IdleOption {
    LOW_LATENCY("low-latency"),
    BACKOFF("backoff");

    static final String CHOICES = "low-latency or backoff";

    private final String name;

    IdleOption(String name) {
        this.name = name;
    }

    /** The option's value, or the bench's default when null. */
    static IdleOption parse(@Nullable String value) {
        if (value == null) {
            return LOW_LATENCY;
        }
        for (IdleOption o : values()) {
            if (o.name.equals(value)) {
                return o;
            }
        }
        throw new UserError("--idle must be " + CHOICES + " but it was '" + value + "'");
    }

    /** A template each node copies (see {@code RdmaNode.Builder.idleStrategy}). */
    ProgressIdleStrategy strategy() {
        return this == LOW_LATENCY ? ProgressIdleStrategy.lowLatency() : ProgressIdleStrategy.backoff();
    }

    @Override
    public String toString() {
        return name;
    }
}
