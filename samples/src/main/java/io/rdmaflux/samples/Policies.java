package io.rdmaflux.samples;

import io.rdmaflux.core.channel.ChannelFactory;
import io.rdmaflux.striping.Rails;
import io.rdmaflux.striping.connection.RailsChannelFactory;

/** Parses {@code --policy} values into the rail-striping factories. */
final class Policies {
    static final String CHOICES = "adaptive, even, rr, weighted:W1,W2,.., window-rr:N";

    private Policies() {
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
                String[] parts = t.substring("weighted:".length()).split(",");
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
                return RailsChannelFactory.weighted(w);
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
