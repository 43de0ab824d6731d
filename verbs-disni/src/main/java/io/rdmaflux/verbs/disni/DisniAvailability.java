package io.rdmaflux.verbs.disni;

import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * {@link DisniProbe#probe()} run once per JVM (initialization-on-demand holder) and cached: loading a
 * JNI library that is missing fails the same way every time, and a class whose static initializer
 * failed cannot be initialized again.
 *
 * <p><b>Concurrency:</b> thread-safe (class initialization).
 */
public final class DisniAvailability {
    private DisniAvailability() {
    }

    /** Why the disni provider cannot run here, or empty when libdisni loads and an RDMA device exists. */
    public static Optional<String> unavailableReason() {
        return Optional.ofNullable(Holder.REASON);
    }

    private static final class Holder {
        static final @Nullable String REASON = DisniProbe.probe().orElse(null);
    }
}
