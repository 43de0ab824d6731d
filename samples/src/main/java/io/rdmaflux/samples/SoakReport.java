package io.rdmaflux.samples;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The soak's end of run for one process: writes its resource samples as CSV, runs the leak test on
 * every series ({@link ResourceSampler#trends}) and prints one line per series plus the verdict.
 * Pass means: every byte verified (the caller's {@code verified}) and no series rising.
 */
final class SoakReport {
    private SoakReport() {
    }

    /**
     * @return whether this process passes
     */
    static boolean finish(String role, List<ResourceSampler.Sample> samples, Path reportDir, boolean verified, PrintWriter out) {
        synchronized (out) { // both roles in one JVM print to one writer: keep each report in one piece
            return report(role, samples, reportDir, verified, out);
        }
    }

    private static boolean report(String role, List<ResourceSampler.Sample> samples, Path reportDir, boolean verified, PrintWriter out) {
        Path csv = reportDir.resolve("soak-" + role + ".csv");
        ResourceSampler.writeCsv(csv, samples);
        boolean flat = true;
        if (samples.size() < 4) {
            out.println(PipelineCommand.row("trend", "only " + samples.size() + " samples: too short to test (run at least 4 s)"));
            flat = false;
        } else {
            List<TrendTest.Result> results = ResourceSampler.trends(samples);
            for (int k = 0; k < results.size(); k++) {
                TrendTest.Result r = results.get(k);
                flat &= !r.rising();
                out.println(PipelineCommand.row("trend", r.describe(ResourceSampler.SERIES.get(k))));
            }
        }
        out.println(PipelineCommand.row("samples", samples.size() + " (1/s) in " + csv));
        boolean pass = verified && flat;
        out.println(String.format(Locale.ROOT, "rdmaflux soak %s: %s", role,
            pass ? "PASS (every byte verified, no series rising)"
                : "FAIL (" + (verified ? "" : "bytes not verified") + (verified || flat ? "" : ", ") + (flat ? "" : "a series rises") + ")"));
        out.flush();
        return pass;
    }
}
