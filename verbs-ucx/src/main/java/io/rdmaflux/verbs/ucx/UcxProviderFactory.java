package io.rdmaflux.verbs.ucx;

import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviderFactory;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.VerbsException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@link java.util.ServiceLoader} entry of the {@code ucx} provider. Priority 5 on a host with an RDMA
 * device: above {@code soft} (0), below a verbs binding on real hardware ({@code disni}, 10); -1
 * elsewhere ({@link #priority()}). Available when UCX loads ({@link UcxLibrary}).
 *
 * <p>Options (all optional): {@code name} (instance name), {@code tls} (UCX transports, e.g.
 * {@code tcp}, {@code sm,self}; default UCX's choice), {@code devices} (1..64, default 1), {@code ports}
 * (ports per device, one rail each, 1..16, default 1),
 * {@code threading} ({@code dedicated} (default) or {@code invoker}), {@code cm} ({@code jvm} (default):
 * the in-JVM connection manager, devices of this JVM only; {@code tcp}: the TCP connection manager at
 * {@code ucx://<ip>:<tcp port>}, between processes; see {@link UcxProvider.Cm}), {@code put}
 * ({@code auto} (default): RDMA WRITE as {@code ucp_put}, and RDMA READ above 4 KiB as {@code ucp_get}, unless {@code tls} is {@code tcp} only;
 * {@code on}; {@code off}; see {@link UcxProvider.Put}), {@code revoke-timeout} (ms, 1..600000, default
 * 1000: how long a region's deregistration waits for peers holding its UCX rkey to acknowledge the
 * revocation before they are taken for failed; see {@link UcxProvider.Builder#revokeTimeoutMs}).
 */
public final class UcxProviderFactory implements RdmaProviderFactory {
    /** The option keys this factory understands. */
    public static final Set<String> OPTIONS = Set.of("name", "tls", "devices", "ports", "threading", "cm", "wait", "cm-host", "put",
        "revoke-timeout");

    /**
     * System property with defaults for options the caller did not give, {@code key=value,key=value}
     * (a piece without {@code =} continues the previous value, so {@code tls=sm,self} works), e.g.
     * {@code -Drdmaflux.ucx.options=threading=invoker,wait=park} to run a tool that opens {@code ucx}
     * with fixed options (the samples' {@code bench}) in another mode. Options given explicitly win.
     */
    public static final String DEFAULTS_PROPERTY = "rdmaflux.ucx.options";

    @Override
    public String name() {
        return UcxProvider.NAME;
    }

    /**
     * Above the soft provider's only where this host has an RDMA device ({@code /sys/class/infiniband}
     * lists one), where UCX runs its rc/ud/dc transports; elsewhere UCX would carry the soft NIC over
     * tcp or shared memory, slower than the soft provider's own fabrics, so {@code auto} keeps choosing
     * {@code soft} and {@code ucx} is there when asked for by name.
     */
    @Override
    public int priority() {
        return priority(Path.of("/sys/class/infiniband"));
    }

    /** 5 with an RDMA device under {@code sysfsInfiniband}, else -1 (below soft's 0). */
    static int priority(Path sysfsInfiniband) {
        try (Stream<Path> devices = Files.list(sysfsInfiniband)) {
            return devices.findAny().isPresent() ? 5 : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    @Override
    public Optional<String> unavailableReason() {
        return UcxLibrary.unavailableReason();
    }

    @Override
    public RdmaProvider open(Map<String, String> given) {
        Map<String, String> options = new java.util.LinkedHashMap<>(parseDefaults(System.getProperty(DEFAULTS_PROPERTY)));
        options.putAll(given);
        for (String key : options.keySet()) {
            if (!OPTIONS.contains(key)) {
                throw new VerbsException("unknown ucx provider option '" + key + "'; known options are " + OPTIONS.stream().sorted().toList());
            }
        }
        UcxProvider.Builder b = UcxProvider.builder();
        String name = options.get("name");
        if (name != null) {
            b.name(name);
        }
        b.tls(options.get("tls"));
        String devices = options.get("devices");
        if (devices != null) {
            b.devices(wholeNumber("devices", devices));
        }
        String ports = options.get("ports");
        if (ports != null) {
            b.portsPerDevice(wholeNumber("ports", ports));
        }
        String threading = options.getOrDefault("threading", "dedicated").toLowerCase(Locale.ROOT);
        switch (threading) {
            case "dedicated" -> b.threadingMode(ThreadingMode.DEDICATED);
            case "invoker" -> b.threadingMode(ThreadingMode.INVOKER);
            default -> throw new VerbsException("ucx provider option threading='" + threading
                + "' is not supported; use 'dedicated' or 'invoker'");
        }
        String cm = options.getOrDefault("cm", "jvm").trim().toLowerCase(Locale.ROOT);
        switch (cm) {
            case "jvm" -> b.cm(UcxProvider.Cm.JVM);
            case "tcp" -> b.cm(UcxProvider.Cm.TCP);
            default -> throw new VerbsException("ucx provider option cm='" + cm
                + "' is not supported; use 'jvm' (devices of this JVM) or 'tcp' (the TCP connection manager, between processes)");
        }
        String wait = options.getOrDefault("wait", "event").trim().toLowerCase(Locale.ROOT);
        switch (wait) {
            case "event" -> b.idleWait(UcxProvider.Wait.EVENT);
            case "park" -> b.idleWait(UcxProvider.Wait.PARK);
            default -> throw new VerbsException("ucx provider option wait='" + wait
                + "' is not supported; use 'event' (block on the UCP worker's event fd) or 'park'");
        }
        String put = options.getOrDefault("put", "auto").trim().toLowerCase(Locale.ROOT);
        switch (put) {
            case "auto" -> b.put(UcxProvider.Put.AUTO);
            case "on" -> b.put(UcxProvider.Put.ON);
            case "off" -> b.put(UcxProvider.Put.OFF);
            default -> throw new VerbsException("ucx provider option put='" + put
                + "' is not supported; use 'auto' (the default: RDMA WRITE as ucp_put unless tls is tcp only), 'on' or 'off' (WRITEs as frames)");
        }
        String revokeTimeout = options.get("revoke-timeout");
        if (revokeTimeout != null) {
            b.revokeTimeoutMs(wholeNumber("revoke-timeout", revokeTimeout));
        }
        String cmHost = options.get("cm-host");
        if (cmHost != null) {
            b.cmHost(cmHost);
        }
        return b.build();
    }

    /** Parses {@link #DEFAULTS_PROPERTY}'s value; a piece without {@code =} continues the previous value. */
    static Map<String, String> parseDefaults(@org.jspecify.annotations.Nullable String text) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        if (text == null || text.isBlank()) {
            return out;
        }
        String last = null;
        for (String piece : text.split(",")) {
            int eq = piece.indexOf('=');
            if (eq <= 0) {
                if (last == null) {
                    throw new VerbsException(DEFAULTS_PROPERTY + " piece '" + piece + "' is not key=value; write e.g. -D"
                        + DEFAULTS_PROPERTY + "=threading=invoker,wait=event");
                }
                out.put(last, out.get(last) + "," + piece.trim());
                continue;
            }
            last = piece.substring(0, eq).trim();
            out.put(last, piece.substring(eq + 1).trim());
        }
        return out;
    }

    private static int wholeNumber(String key, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new VerbsException("ucx provider option " + key + "='" + value + "' is not a whole number", e);
        }
    }
}
