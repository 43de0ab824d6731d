package io.rdmaflux.samples;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.striping.MultiplexingPolicies;
import io.rdmaflux.striping.Rails;
import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.StripingPolicies;
import io.rdmaflux.striping.connection.RailsChannelFactory;

/** Parses {@code --policy} values into the rail-striping factories. */
final class Policies {
    static final String CHOICES = "adaptive, even, rr, weighted:W1,W2,.., window-rr:N";

    private Policies() {
    }

    /**
     * Parses {@code --policy} for one-sided transfers over rails (seed 002 §3.2): {@code adaptive},
     * {@code even}, {@code weighted:..} and {@code load-balanced} fragment transfers above the
     * switchover threshold with that striping policy; {@code rr} and {@code window-rr:N} send each
     * transfer whole on one rail.
     *
     * @return a customizer for the rails' spec
     * @throws UserError naming the value when it is not one of {@link #ONE_SIDED_CHOICES}
     */
    static java.util.function.Consumer<RailsSpec> oneSided(String text, int rails) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        try {
            if (t.equals("adaptive")) {
                return s -> s.striping(StripingPolicies.adaptive());
            }
            if (t.equals("even")) {
                return s -> s.striping(StripingPolicies.even());
            }
            if (t.equals("load-balanced")) {
                return s -> s.striping(StripingPolicies.loadBalanced());
            }
            if (t.equals("rr") || t.equals("round-robin")) {
                return s -> s.multiplexing(MultiplexingPolicies.roundRobin()).switchoverThresholdBytes(Long.MAX_VALUE);
            }
            if (t.startsWith("weighted:")) {
                double[] w = weights(text, t.substring("weighted:".length()), rails);
                return s -> s.striping(StripingPolicies.weighted(w));
            }
            if (t.startsWith("window-rr:")) {
                int n = Integer.parseInt(t.substring("window-rr:".length()));
                MultiplexingPolicies.windowRoundRobin(n);
                return s -> s.multiplexing(MultiplexingPolicies.windowRoundRobin(n)).switchoverThresholdBytes(Long.MAX_VALUE);
            }
        } catch (NumberFormatException e) {
            throw new UserError("--policy " + text + " has a number that is not one; choose one of " + ONE_SIDED_CHOICES);
        } catch (IllegalArgumentException e) {
            throw new UserError("--policy " + text + ": " + e.getMessage());
        }
        throw new UserError("unknown --policy '" + text + "' for one-sided tests; choose one of " + ONE_SIDED_CHOICES);
    }

    static final String ONE_SIDED_CHOICES = "adaptive, even, load-balanced, rr, weighted:W1,W2,.., window-rr:N";

    private static double[] weights(String text, String list, int rails) {
        String[] parts = list.split(",");
        if (parts.length != rails) {
            throw new UserError("--policy " + text + " gives " + parts.length + " weights for " + rails + " rails; give one weight per rail");
        }
        double[] w = new double[parts.length];
        for (int i = 0; i < w.length; i++) {
            w[i] = Double.parseDouble(parts[i]);
            if (!(w[i] >= 0) || Double.isInfinite(w[i])) {
                throw new UserError("--policy " + text + ": weights must be finite and >= 0");
            }
        }
        return w;
    }

    static ChannelFactory parse(String text, int rails) {
        String t = text.trim().toLowerCase(java.util.Locale.ROOT);
        try {
            if (t.equals("adaptive")) {
                return Rails.adaptive();
            }
            if (t.equals("even")) {
                return RailsChannelFactory.even();
            }
            if (t.equals("rr") || t.equals("round-robin")) {
                return ChannelFactory.roundRobin();
            }
            if (t.startsWith("weighted:")) {
                return RailsChannelFactory.weighted(weights(text, t.substring("weighted:".length()), rails));
            }
            if (t.startsWith("window-rr:")) {
                return RailsChannelFactory.windowRoundRobin(Integer.parseInt(t.substring("window-rr:".length())));
            }
        } catch (NumberFormatException e) {
            throw new UserError("--policy " + text + " has a number that is not one; choose one of " + CHOICES);
        } catch (IllegalArgumentException e) {
            throw new UserError("--policy " + text + ": " + e.getMessage());
        }
        throw new UserError("unknown --policy '" + text + "'; choose one of " + CHOICES);
    }
}
