package io.rdmaflux.samples;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import org.jspecify.annotations.Nullable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code --json} twin of a {@code bench} table: the run's settings and one object per printed size,
 * in the table's units (latency in &micro;s, one way = RTT/2; bandwidth in MB/s with MB = 10^6 bytes,
 * as OSU prints it; messages/s). Written once, after the last size, with Jackson's streaming generator.
 *
 * <pre>{@code
 * {"test":"latency","provider":"soft","fabric":"mem","rails":1,"policy":"adaptive","window":64,
 *  "jitWarmup":10000,"peer":null,
 *  "rows":[{"sizeBytes":8,"warmup":100,"iterations":10000,"latencyUs":1.02,"p50Us":0.98,"p99Us":1.71}, ...]}
 * }</pre>
 *
 * <p>Not thread-safe: one run's caller thread adds the rows.
 */
final class BenchReport {
    private record Row(OsuSchedule.Step step, String[] names, double[] values) {
    }

    private final BenchCommand.@Nullable Settings settings;
    private final String peer;
    private final List<Row> rows = new ArrayList<>();

    private BenchReport(BenchCommand.@Nullable Settings settings, String peer) {
        this.settings = settings;
        this.peer = peer;
    }

    /** A report for {@code s}, writing to its {@code --json} file if it has one (else a no-op). */
    static BenchReport of(BenchCommand.Settings s, String peer) {
        return new BenchReport(s.json() != null ? s : null, peer);
    }

    void latency(OsuSchedule.Step step, double meanUs, double p50Us, double p99Us) {
        rows.add(new Row(step, new String[] {"latencyUs", "p50Us", "p99Us"}, new double[] {meanUs, p50Us, p99Us}));
    }

    void bandwidth(OsuSchedule.Step step, double megabytesPerSec) {
        rows.add(new Row(step, new String[] {"bandwidthMBps"}, new double[] {megabytesPerSec}));
    }

    /** A put-get-bw row: each alone, both at once, and the gain of both over the faster alone. */
    void putGet(OsuSchedule.Step step, double putMBps, double getMBps, double bothMBps, double gain) {
        rows.add(new Row(step, new String[] {"putMBps", "getMBps", "putGetMBps", "gain"}, new double[] {putMBps, getMBps, bothMBps, gain}));
    }

    void messageRate(OsuSchedule.Step step, double megabytesPerSec, double messagesPerSec) {
        rows.add(new Row(step, new String[] {"bandwidthMBps", "messagesPerSec"}, new double[] {megabytesPerSec, messagesPerSec}));
    }

    /**
     * Writes the JSON file, when {@code --json} was given.
     *
     * @throws UserError if the file cannot be written, naming it
     */
    void write() {
        BenchCommand.Settings s = settings;
        if (s == null || s.json() == null) {
            return;
        }
        Path file = s.json();
        try (JsonGenerator g = new JsonFactory().createGenerator(file.toFile(), JsonEncoding.UTF8)) {
            g.useDefaultPrettyPrinter();
            g.writeStartObject();
            g.writeStringField("test", BenchCommand.name(s.test()));
            g.writeStringField("provider", s.provider());
            g.writeStringField("fabric", s.fabric());
            g.writeNumberField("rails", s.rails());
            g.writeStringField("policy", s.policy());
            g.writeNumberField("window", s.window());
            g.writeNumberField("jitWarmup", s.schedule().jitWarmup());
            if (peer.isEmpty()) {
                g.writeNullField("peer");
            } else {
                g.writeStringField("peer", peer);
            }
            g.writeArrayFieldStart("rows");
            for (Row r : rows) {
                g.writeStartObject();
                g.writeNumberField("sizeBytes", r.step.sizeBytes());
                g.writeNumberField("warmup", r.step.warmup());
                g.writeNumberField("iterations", r.step.iterations());
                for (int i = 0; i < r.names.length; i++) {
                    g.writeNumberField(r.names[i], r.values[i]);
                }
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UserError("cannot write --json " + file + ": " + e.getMessage(), e);
        } catch (UncheckedIOException e) {
            throw new UserError("cannot write --json " + file + ": " + e.getCause().getMessage(), e);
        }
    }
}
