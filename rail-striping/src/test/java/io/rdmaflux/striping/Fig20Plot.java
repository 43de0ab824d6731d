package io.rdmaflux.striping;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes seed 000 Fig. 20 from the deterministic virtual-time simulation: two 1 GB/s rails, 1 MiB
 * messages, 8 in flight, adaptive striping (default 20 ms rate window); rail 1 at a quarter from 50 ms
 * to 250 ms. Output:
 * {@code striping-weights-virtual.html} in the directory given as first argument.
 *
 * <p>Run: {@code mvn -B -o -q -pl rail-striping test-compile exec:java -Dexec.classpathScope=test
 * -Dexec.mainClass=io.rdmaflux.striping.Fig20Plot -Dexec.args=rail-striping/reports}
 */
public final class Fig20Plot {
    private Fig20Plot() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "rail-striping/reports");
        VirtualTimeLoop loop = new VirtualTimeLoop();
        long gb = 1_000_000_000L;
        SimLink[] links = {new SimLink(loop, "rail0", gb, 2_000, 64 * 1024), new SimLink(loop, "rail1", gb, 2_000, 64 * 1024)};
        RailsSpec spec = RailsSpec.rails(2).striping(StripingPolicies.adaptive()).maxInFlightMessages(8).switchoverThresholdBytes(0);
        SimSender s = new SimSender(loop, spec, links, Long.MAX_VALUE, i -> 1 << 20);
        loop.at(50_000_000, () -> links[1].rateBytesPerSec(gb / 4));
        loop.at(250_000_000, () -> links[1].rateBytesPerSec(gb));
        s.pump();
        loop.runUntil(400_000_000);
        List<StripingMetrics.WeightSample> h = s.scheduler.metrics().weightHistory();
        String html = WeightChart.html("Adaptive striping weights (seed 000 eq. 4, alpha 0.5, rates over a 20 ms busy-time window), "
                + "deterministic virtual time: two 1 GB/s rails, 1 MiB messages, 8 in flight; rail 1 at 1/4 capacity from 50 ms to "
                + "250 ms (seed 000 Fig. 20).",
            h, 0, 400_000_000, List.of(new WeightChart.Shade(50_000_000, 250_000_000, "rail 1 at 1/4 capacity")));
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("striping-weights-virtual.html"), html);
        System.out.println("wrote " + dir.resolve("striping-weights-virtual.html") + " (" + h.size() + " samples)");
    }
}
