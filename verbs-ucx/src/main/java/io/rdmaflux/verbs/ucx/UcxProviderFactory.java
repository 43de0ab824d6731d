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
 * {@code ucx://<ip>:<tcp port>}, between processes; see {@link UcxProvider.Cm}).
 */
public final class UcxProviderFactory implements RdmaProviderFactory {
    /** The option keys this factory understands. */
    public static final Set<String> OPTIONS = Set.of("name", "tls", "devices", "ports", "threading", "cm");

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
    public RdmaProvider open(Map<String, String> options) {
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
        return b.build();
    }

    private static int wholeNumber(String key, String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new VerbsException("ucx provider option " + key + "='" + value + "' is not a whole number", e);
        }
    }
}
