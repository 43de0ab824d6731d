package io.rdmaflux.samples;

import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * How many iterations {@code bench} runs at each size, after the OSU Micro-Benchmarks (OMB
 * {@code osu_util.h}): messages up to {@value #LARGE_MESSAGE_BYTES} bytes are "small" and the rest
 * "large"; latency runs 10,000 timed ping-pongs after 100 skipped ones for a small size and 1,000 after
 * 10 for a large one; the streaming tests (bw, bibw, msg-rate, put-bw, get-bw) run 100 timed windows
 * after 10 skipped ones for a small size and 20 after 2 for a large one, a window being
 * {@value #DEFAULT_WINDOW} messages. {@code -i/--iterations} and {@code -x/--warmup} override the
 * counts for every size, as OMB's own flags do.
 *
 * <p>One deviation, on purpose: OMB runs in C, where the first timed iteration runs compiled code. A
 * JVM runs its first thousands of iterations in the interpreter and C1, so a run that starts timing
 * at the first size measures the JIT (the old default printed 143 &micro;s p50 for 8 B in-JVM, then
 * 1 &micro;s once warm). The schedule therefore starts with one JIT warm-up step at the first size that
 * is run and not printed ({@code --jit-warmup}, default {@link #defaultJitWarmup}); each size's own
 * skipped iterations then warm what is particular to that size (e.g. the rendezvous path of large
 * messages).
 *
 * <p>Immutable; thread-safe.
 */
final class OsuSchedule {
    /** OMB's {@code LARGE_MESSAGE_SIZE}: sizes above it use the large counts, bytes. */
    static final int LARGE_MESSAGE_BYTES = 8192;
    /** OMB's {@code WINDOW_SIZE_LARGE}, the default {@code -W}: messages in flight per streaming iteration. */
    static final int DEFAULT_WINDOW = 64;

    private static final int LAT_LOOP_SMALL = 10_000;
    private static final int LAT_SKIP_SMALL = 100;
    private static final int LAT_LOOP_LARGE = 1_000;
    private static final int LAT_SKIP_LARGE = 10;
    private static final int BW_LOOP_SMALL = 100;
    private static final int BW_SKIP_SMALL = 10;
    private static final int BW_LOOP_LARGE = 20;
    private static final int BW_SKIP_LARGE = 2;

    /**
     * One step of a run: {@code warmup} skipped then {@code iterations} timed iterations of
     * {@code sizeBytes}-byte messages (a ping-pong, or a window of messages). A step that is not
     * {@code printed} is the JIT warm-up: it runs, and its figures are dropped.
     */
    record Step(int sizeBytes, int warmup, int iterations, boolean printed) {
        Step {
            if (sizeBytes < 1 || warmup < 0 || iterations < 1) {
                throw new IllegalArgumentException("a step needs sizeBytes >= 1, warmup >= 0 and iterations >= 1 but it was "
                    + sizeBytes + ", " + warmup + ", " + iterations);
            }
        }
    }

    private final BenchCommand.Test test;
    private final @Nullable Integer iterations;
    private final @Nullable Integer warmup;
    private final int jitWarmup;

    /**
     * @param iterations {@code -i}: timed iterations for every size, or null for OMB's by size
     * @param warmup     {@code -x}: skipped iterations for every size, or null for OMB's by size
     * @param jitWarmup  iterations of the JIT warm-up step before the first size, 0 for none
     */
    OsuSchedule(BenchCommand.Test test, @Nullable Integer iterations, @Nullable Integer warmup, int jitWarmup) {
        this.test = test;
        this.iterations = iterations;
        this.warmup = warmup;
        this.jitWarmup = jitWarmup;
    }

    /** OMB's timed iterations at {@code sizeBytes} for {@code test}. */
    static int defaultIterations(BenchCommand.Test test, int sizeBytes) {
        boolean large = sizeBytes > LARGE_MESSAGE_BYTES;
        if (BenchCommand.isLatency(test)) {
            return large ? LAT_LOOP_LARGE : LAT_LOOP_SMALL;
        }
        return large ? BW_LOOP_LARGE : BW_LOOP_SMALL;
    }

    /** OMB's skipped iterations at {@code sizeBytes} for {@code test}. */
    static int defaultWarmup(BenchCommand.Test test, int sizeBytes) {
        boolean large = sizeBytes > LARGE_MESSAGE_BYTES;
        if (BenchCommand.isLatency(test)) {
            return large ? LAT_SKIP_LARGE : LAT_SKIP_SMALL;
        }
        return large ? BW_SKIP_LARGE : BW_SKIP_SMALL;
    }

    /**
     * The default JIT warm-up: one small size's OMB iterations again (10,000 ping-pongs, or 100
     * windows), which on this machine kind takes the common path of the connection through C2.
     */
    static int defaultJitWarmup(BenchCommand.Test test) {
        return defaultIterations(test, 1);
    }

    /** Timed iterations at {@code sizeBytes}. */
    int iterations(int sizeBytes) {
        return iterations != null ? iterations : defaultIterations(test, sizeBytes);
    }

    /** Skipped iterations at {@code sizeBytes}. */
    int warmup(int sizeBytes) {
        return warmup != null ? warmup : defaultWarmup(test, sizeBytes);
    }

    /** Iterations of the JIT warm-up step, 0 for none. */
    int jitWarmup() {
        return jitWarmup;
    }

    /**
     * The steps that measure {@code sizes} in order, led by the JIT warm-up step at the first size when
     * {@code withJitWarmup} and {@link #jitWarmup()} &gt; 0.
     */
    List<Step> steps(List<Integer> sizes, boolean withJitWarmup) {
        List<Step> steps = new ArrayList<>(sizes.size() + 1);
        if (withJitWarmup && jitWarmup > 0 && !sizes.isEmpty()) {
            steps.add(new Step(sizes.get(0), 0, jitWarmup, false));
        }
        for (int size : sizes) {
            steps.add(new Step(size, warmup(size), iterations(size), true));
        }
        return steps;
    }

    /** The header's words for the counts, e.g. {@code "iterations OSU (10000 after 100 up to 8 KiB, 1000 after 10 above)"}. */
    String describe() {
        String timed = iterations != null ? Integer.toString(iterations)
            : defaultIterations(test, 1) + "/" + defaultIterations(test, LARGE_MESSAGE_BYTES + 1);
        String skipped = warmup != null ? Integer.toString(warmup)
            : defaultWarmup(test, 1) + "/" + defaultWarmup(test, LARGE_MESSAGE_BYTES + 1);
        String by = iterations == null || warmup == null ? " (small/large, OSU: large is above " + LARGE_MESSAGE_BYTES + " bytes)" : "";
        return "iterations " + timed + " after " + skipped + " skipped" + by + ", JIT warm-up " + jitWarmup;
    }
}
