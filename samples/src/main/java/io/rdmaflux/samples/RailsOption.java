package io.rdmaflux.samples;

import org.jspecify.annotations.Nullable;

/**
 * The {@code --rails} and {@code --devices} options of bench and pipeline: {@code --rails N} (a rail count) or
 * {@code --rails tx0:1,tx1:1} (device:port[:paths] entries, one rail per path), and {@code --devices D}, the
 * soft NICs per in-JVM host (rails spread over them round robin when {@code --rails} is a count). Only the
 * in-JVM soft run lays rails over several devices; elsewhere a device list or {@code --devices} is refused
 * with the fix.
 */
final class RailsOption {
    /** Rails of one connection at most. */
    static final int MAX_RAILS = 16;
    /** The {@code --rails} help text. */
    static final String HELP = "Rails: a count 1..16, or device:port[:paths] entries of the in-JVM soft sender's NICs tx0, tx1, .. "
        + "(the receiver mirrors them on rx0, rx1, ..), e.g. --rails tx0:1,tx1:1 (two devices) or --rails tx0:1,tx0:2 (two ports of one)";
    /** The {@code --devices} help text. */
    static final String DEVICES_HELP = "Soft NICs (devices) per in-JVM host, 1..16 (default 1, or as many as --rails names); "
        + "with a --rails count, rail i is on device i mod N: --devices 2 --rails 2 stripes over two devices";

    private RailsOption() {
    }

    /**
     * @param count  rails of the connection
     * @param layout the soft NICs and rails, or null for one NIC per host with port {@code i + 1} rail {@code i}
     */
    record Parsed(int count, @Nullable SoftRailLayout layout) {
        /** Refuses a layout where it does not apply ({@code where}: what the run is, e.g. {@code --provider ucx}). */
        Parsed requireOneDevice(boolean condition, String where) {
            if (condition && layout != null) {
                throw new UserError("--rails " + layout.describe() + " and --devices apply to the in-JVM soft run, not " + where
                    + "; give a rail count with --rails N (over IP: one rail per --addresses entry)");
            }
            return this;
        }
    }

    /**
     * @throws UserError naming the bad value and the fix
     */
    static Parsed parse(@Nullable String rails, @Nullable Integer devices, int defaultCount) {
        if (rails == null || rails.trim().matches("-?\\d+")) {
            int count = rails == null ? defaultCount : Integer.parseInt(rails.trim());
            if (count < 1 || count > MAX_RAILS) {
                throw new UserError("--rails must be in 1.." + MAX_RAILS + " but it was " + rails + " (or device:port entries, e.g. tx0:1,tx1:1)");
            }
            return new Parsed(count, devices == null ? null : SoftRailLayout.ofCount(count, devices));
        }
        SoftRailLayout layout = SoftRailLayout.parse(rails, devices);
        if (layout.railCount() > MAX_RAILS) {
            throw new UserError("--rails " + rails + " makes " + layout.railCount() + " rails (paths count one each); at most " + MAX_RAILS);
        }
        return new Parsed(layout.railCount(), layout);
    }
}
