package io.rdmaflux.verbs.testing.fuzz;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Runs one wire decoder over a stored corpus and over seeded mutations of valid encodings
 * ({@link WireMutator}) and fails on the first input that breaks the decoder's contract:
 * <ul>
 *   <li>it threw anything but the module's protocol error (e.g. {@code FrameFormatException}), or that
 *       error without a message;</li>
 *   <li>it allocated more than {@code allocationFactor} &times; the input's size + {@code allocationSlackBytes}
 *       on the calling thread (measured with {@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}),
 *       i.e. it let a length field size an allocation;</li>
 *   <li>it took more than {@link #MAX_NANOS_PER_INPUT} for one input, twice (a GC pause may fall in one run):
 *       a loop driven by a count or length
 *       field instead of the input's size. (A decoder that never returns would hang the test; the
 *       decoders' loops are bounded by the input's size or a fixed count, which this bound checks;
 *       the team's leak check forbids JUnit's timeout watcher thread.)</li>
 * </ul>
 * The failing input is written as hex to
 * {@code target/fuzz-failures/<decoder>-<n>.hex}, the corpus format, ready to be kept as a regression case.
 *
 * <p>The bound of a run: system property {@code fuzz.iterations} (mutations per seed; the caller's
 * default otherwise) and {@code fuzz.seed} (default 20). Not thread-safe.
 */
public final class DecoderFuzzer {
    /** One decoder under test: decodes {@code input} as a receiver would, throwing on bad input. */
    @FunctionalInterface
    public interface Decoder {
        void decode(byte[] input) throws Exception;
    }

    /** What a run did: inputs run, how many the decoder accepted and how many it refused with its protocol error. */
    public record Result(int runs, int accepted, int refused) {
    }

    /** Longest time one input may take, ns (generous: a GC pause or a JIT compile may fall in it). */
    public static final long MAX_NANOS_PER_INPUT = 1_000_000_000L;
    private static final HexFormat HEX = HexFormat.of();
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final String name;
    private final Class<? extends Exception> protocolError;
    private final Decoder decoder;
    private final int allocationFactor;
    private final long allocationSlackBytes;
    private int accepted;
    private int refused;

    /**
     * @param name                 names the decoder in reports and failure files
     * @param protocolError        the only exception type a malformed input may raise
     * @param allocationFactor     allowed allocation per input byte
     * @param allocationSlackBytes allowed allocation on top (exception, message, small objects)
     */
    public DecoderFuzzer(String name, Class<? extends Exception> protocolError, Decoder decoder,
                         int allocationFactor, long allocationSlackBytes) {
        this.name = name;
        this.protocolError = protocolError;
        this.decoder = decoder;
        this.allocationFactor = allocationFactor;
        this.allocationSlackBytes = allocationSlackBytes;
        if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
            throw new IllegalStateException("this JVM cannot measure per-thread allocation; the fuzz tests need it");
        }
    }

    /** Mutations per seed for this run: {@code -Dfuzz.iterations}, else {@code defaultIterations}. */
    public static int iterations(int defaultIterations) {
        return Integer.getInteger("fuzz.iterations", defaultIterations);
    }

    /** The random seed of this run: {@code -Dfuzz.seed}, else 20. */
    public static long randomSeed() {
        return Long.getLong("fuzz.seed", 20L);
    }

    /** Runs every seed, then {@code iterations} mutations of each; fails on the first contract breach. */
    public Result fuzz(List<WireMutator.Seed> seeds, int iterations, long randomSeed) {
        int before = accepted + refused;
        WireMutator m = new WireMutator(randomSeed);
        for (WireMutator.Seed s : seeds) {
            check(s.bytes(), "seed " + s.name());
        }
        for (int i = 0; i < iterations; i++) {
            for (WireMutator.Seed s : seeds) {
                check(m.mutate(s), "mutation " + i + " of seed " + s.name() + " (fuzz.seed " + randomSeed + ")");
            }
        }
        Result r = new Result(accepted + refused - before, accepted, refused);
        System.out.println("fuzz " + name + ": " + r.runs() + " inputs (" + seeds.size() + " seeds x " + iterations
            + " mutations + seeds); so far with the corpus: " + accepted + " decoded, " + refused + " refused with " + protocolError.getSimpleName());
        return r;
    }

    /** Runs every input of a corpus; returns how many. */
    public int replay(Map<String, byte[]> corpus) {
        corpus.forEach((file, input) -> check(input, "corpus file " + file));
        return corpus.size();
    }

    public int accepted() {
        return accepted;
    }

    public int refused() {
        return refused;
    }

    /** Decodes one input and checks the contract. */
    public void check(byte[] input, String origin) {
        long limit = (long) allocationFactor * input.length + allocationSlackBytes;
        long[] run = runOnce(input, origin);
        if (run[0] > limit || run[1] > MAX_NANOS_PER_INPUT) {
            // the first run may pay for one-time linkage (string concatenation, class init) or fall in a GC
            // pause or a stall of the machine: measure again, and fail only if the second run breaks the bound too
            run = runOnce(input, origin);
            if (run[0] > limit) {
                throw failure(input, origin, name + " allocated " + run[0] + " bytes for a " + input.length
                    + "-byte input (bound " + limit + "): an attacker's length field sizes an allocation", null);
            }
            if (run[1] > MAX_NANOS_PER_INPUT) {
                throw failure(input, origin, name + " took " + run[1] / 1_000_000 + " ms for one " + input.length
                    + "-byte input, twice", null);
            }
        }
    }

    /** @return bytes allocated and ns taken */
    private long[] runOnce(byte[] input, String origin) {
        byte[] copy = input.clone();
        long start = THREADS.getCurrentThreadAllocatedBytes();
        long startNs = System.nanoTime();
        Throwable thrown = null;
        try {
            decoder.decode(copy);
        } catch (Throwable t) {
            thrown = t;
        }
        long tookNs = System.nanoTime() - startNs;
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - start;
        if (thrown == null) {
            accepted++;
        } else if (protocolError.isInstance(thrown) && thrown.getMessage() != null && !thrown.getMessage().isBlank()) {
            refused++;
        } else {
            throw failure(input, origin, name + " threw " + thrown + " instead of a " + protocolError.getSimpleName()
                + " naming the field", thrown);
        }
        return new long[]{allocated, tookNs};
    }

    private AssertionError failure(byte[] input, String origin, String what, Throwable cause) {
        Path file = Path.of("target", "fuzz-failures", name + "-" + Integer.toHexString(java.util.Arrays.hashCode(input)) + ".hex");
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, "# " + what + "\n# " + origin + "\n" + HEX.formatHex(input) + "\n");
        } catch (IOException e) {
            // the report below still carries the input
        }
        return new AssertionError(what + "; " + origin + "; input (" + input.length + " bytes, saved to " + file + "): "
            + HEX.formatHex(input), cause);
    }

    /**
     * The corpus stored under classpath directory {@code dir} (e.g. {@code fuzz/frame}): every {@code *.hex}
     * file, one input each, hex digits with any whitespace, {@code #} starting a comment line; by file name.
     */
    public static Map<String, byte[]> corpus(Class<?> anchor, String dir) {
        URL url = anchor.getClassLoader().getResource(dir);
        if (url == null) {
            throw new IllegalStateException("no fuzz corpus directory " + dir + " on the test class path");
        }
        Map<String, byte[]> out = new TreeMap<>();
        try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
            for (Path p : files.filter(f -> f.toString().endsWith(".hex")).toList()) {
                StringBuilder hex = new StringBuilder();
                for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                    if (!line.strip().startsWith("#")) {
                        hex.append(line.replaceAll("\\s", ""));
                    }
                }
                out.put(p.getFileName().toString(), HEX.parseHex(hex));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

}
