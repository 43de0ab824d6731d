package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaServer;
import io.rdmaflux.verbs.PortAddress;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Runs one soak role in this process, with its {@link ResourceSampler} sampling from before the
 * endpoint opens until after it closed, and reports ({@link SoakReport}): {@link #receive} (the
 * {@code --listen} side), {@link #send} (the {@code --connect} side) or {@link #both} (both in this
 * JVM over net loopback, two providers; one sampler for the JVM).
 */
final class SoakRun {
    private SoakRun() {
    }

    /**
     * What a soak run is.
     *
     * @param rails          local IP per rail (the rail count)
     * @param runNs          how long the sender streams, ns (rounded to a whole number of epochs, at least one)
     * @param epochNs        one connection's life, ns
     * @param maxMessageBytes largest DATA message, bytes (sizes are spread over 64 .. this)
     * @param flaps          one random rail flap per epoch (sender side)
     * @param maxDownMs      longest flap, ms
     * @param rcLoss         RC frame loss each port injects, probability
     * @param seed           the run's seed (message sizes and bytes, flaps, losses)
     * @param samplePeriodMs resource sampling period, ms
     * @param gc             {@code System.gc()} before each heap sample
     * @param reportDir      where the CSVs go
     * @param timeout        bound on the whole run (waiting for the peer included)
     */
    record Config(List<String> rails, long runNs, long epochNs, int maxMessageBytes, boolean flaps, long maxDownMs, double rcLoss,
                  long seed, long samplePeriodMs, boolean gc, Path reportDir, Duration timeout) {
        NetRails.Settings settings() {
            return new NetRails.Settings(rails, null, 8192, 32, Math.max(maxMessageBytes, 8192), 16, Policies.parse("adaptive", rails.size()));
        }
    }

    /** The {@code --listen} side; {@code onListening} gets the bound host:port. Returns whether it passes. */
    static boolean receive(Config c, NetRails.HostPort at, PrintWriter out, Consumer<String> onListening) {
        long deadlineNs = System.nanoTime() + c.timeout().toNanos();
        SoakEndpoint ep = new SoakEndpoint(c.settings(), "soak-receiver", c.rcLoss(), c.seed());
        SoakReceiver.Result r;
        List<ResourceSampler.Sample> samples;
        try (ResourceSampler sampler = new ResourceSampler(ep::registeredBytes, ep::buffersHeld, c.samplePeriodMs(), c.gc())) {
            try (RdmaServer server = ep.node().bind(new PortAddress("net", at.host(), at.port()))) {
                onListening.accept(server.address().host() + ":" + server.address().port());
                r = new SoakReceiver(c.maxMessageBytes()).serve(server, deadlineNs);
            } finally {
                ep.close();
            }
            sampler.close();
            samples = sampler.samples();
        }
        out.println(String.format(Locale.ROOT, "rdmaflux soak --listen %s: %d messages (%s) verified, %d wrong, %d epochs; %s", at,
            r.verified(), PipelineCommand.mib(r.bytes()), r.wrong(), r.epochs(), c.rails().size() + " rails " + String.join(",", c.rails())));
        if (r.firstError() != null) {
            out.println(PipelineCommand.row("first error", r.firstError()));
        }
        return SoakReport.finish("receiver", samples, c.reportDir(), r.wrong() == 0 && r.verified() > 0, out);
    }

    /** The {@code --connect} side. Returns whether it passes. */
    static boolean send(Config c, NetRails.HostPort to, PrintWriter out) {
        long deadlineNs = System.nanoTime() + c.timeout().toNanos();
        long t0 = System.nanoTime();
        SoakEndpoint ep = new SoakEndpoint(c.settings(), "soak-sender", c.rcLoss(), c.seed());
        SoakSender.Result r;
        List<ResourceSampler.Sample> samples;
        try (ResourceSampler sampler = new ResourceSampler(ep::registeredBytes, ep::buffersHeld, c.samplePeriodMs(), c.gc())) {
            try {
                r = new SoakSender(ep, new PortAddress("net", to.host(), to.port()), c.seed(), c.maxMessageBytes(), c.flaps(), c.maxDownMs())
                    .run(c.runNs(), c.epochNs(), deadlineNs);
            } finally {
                ep.close();
            }
            sampler.close();
            samples = sampler.samples();
        }
        double s = (System.nanoTime() - t0) / 1e9;
        out.println(String.format(Locale.ROOT, "rdmaflux soak --connect %s: %d messages, %s in %.1f s (%.1f MiB/s), %d epochs, %d rail flaps, "
                + "RC loss %.3f per port; every message verified by the receiver", to, r.messages(), PipelineCommand.mib(r.bytes()), s,
            r.bytes() / s / (1 << 20), r.epochs(), r.flaps(), c.rcLoss()));
        return SoakReport.finish("sender", samples, c.reportDir(), true, out);
    }

    /** Both sides in this JVM over net loopback. Returns whether both pass. */
    static boolean both(Config c, PrintWriter out) {
        CompletableFuture<String> bound = new CompletableFuture<>();
        CompletableFuture<Boolean> receiver = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                receiver.complete(receive(c, new NetRails.HostPort(c.rails().get(0), 0), out, bound::complete));
            } catch (Throwable e) {
                bound.completeExceptionally(e);
                receiver.completeExceptionally(e);
            }
        }, "rdmaflux-soak-receiver");
        t.start();
        long deadlineNs = System.nanoTime() + c.timeout().toNanos();
        boolean sent;
        try {
            String at = Deadlines.await(bound, deadlineNs, "the in-JVM soak receiver to listen");
            sent = send(c, NetRails.HostPort.parse("--connect", at), out);
        } catch (RuntimeException e) {
            try {
                receiver.get(30, java.util.concurrent.TimeUnit.SECONDS); // let it report and close; the sender's error is the one to show
            } catch (Exception ignored) {
                // the receiver fails too when the sender did
            }
            throw e;
        }
        boolean received = Deadlines.await(receiver, deadlineNs, "the in-JVM soak receiver");
        try {
            t.join(Duration.ofSeconds(30).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return sent && received;
    }
}
