package io.rdmaflux.samples;

import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.soft.SoftProvider;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The NICs of the two in-JVM hosts of {@link InJvmRails}: a sender device and a receiver device with
 * one port per rail, from one of the providers the samples run on:
 * <ul>
 *   <li>{@code soft}: one soft provider on a private in-JVM (mem) fabric whose ports are shaped
 *       (bandwidth in bytes/s, one-way latency in ns) per rail;</li>
 *   <li>{@code ucx}: two {@code ucx} providers (JUCX over the system's UCX library, module verbs-ucx),
 *       one per host, over UCX shared memory ({@code sm,self}) or UCX's tcp transport on loopback.
 *       UCX rails are not shaped: a bandwidth or latency asked of them is refused.</li>
 * </ul>
 *
 * <p><b>Errors:</b> {@link UserError} naming the provider or fabric and the fix when it is unknown,
 * when UCX cannot run here (from the provider registry's message: what is missing and how to install
 * it), or when shaping is asked of UCX rails.
 *
 * <p><b>Concurrency:</b> setup and {@link #close()} on one thread; {@link #close()} is idempotent and
 * leaves no thread behind.
 */
final class InJvmNics implements AutoCloseable {
    /** The providers the in-JVM samples run on. */
    static final String PROVIDERS = "soft or ucx";

    private final String provider;
    private final String fabric;
    private final RdmaProvider sender;
    private final String senderDevice;
    private final RdmaProvider receiver;
    private final String receiverDevice;
    private boolean closed;

    private InJvmNics(String provider, String fabric, RdmaProvider sender, String senderDevice, RdmaProvider receiver, String receiverDevice) {
        this.provider = provider;
        this.fabric = fabric;
        this.sender = sender;
        this.senderDevice = senderDevice;
        this.receiver = receiver;
        this.receiverDevice = receiverDevice;
    }

    /**
     * Opens the two hosts' NICs.
     *
     * @param provider        {@code soft} or {@code ucx}
     * @param ucxFabric       for {@code ucx}: {@code sm} (shared memory, the default when null) or {@code tcp}; ignored for soft
     * @param railBytesPerSec one bandwidth per rail, bytes/s ({@link Long#MAX_VALUE}: unshaped)
     * @param latencyNs       one-way latency of every rail, ns
     * @param bufferBytes     the send/receive buffer size, bytes (the shaper's burst follows it)
     * @throws UserError naming the value and the fix, for an unknown provider or fabric, UCX missing, or shaped UCX rails
     */
    static InJvmNics open(String provider, String ucxFabric, List<Long> railBytesPerSec, long latencyNs, int bufferBytes) {
        return open(provider, ucxFabric, SoftRailLayout.ofCount(railBytesPerSec.size(), 1), railBytesPerSec, latencyNs, bufferBytes);
    }

    /**
     * As {@link #open(String, String, List, long, int)}, the soft hosts' NICs laid out as {@code layout} says
     * (several devices per host); the ucx provider takes a one-device layout only.
     */
    static InJvmNics open(String provider, String ucxFabric, SoftRailLayout layout, List<Long> railBytesPerSec, long latencyNs,
                          int bufferBytes) {
        if (!"soft".equals(provider) && layout.devices() > 1) {
            throw new UserError("--devices " + layout.devices() + " applies to --provider soft; the ucx provider has one device per host");
        }
        return switch (provider) {
            case "soft" -> {
                SoftProvider p = InJvmRails.provider(layout, railBytesPerSec, latencyNs, bufferBytes);
                yield new InJvmNics("soft", "mem", p, "tx0", p, "rx0");
            }
            case "ucx" -> ucx(ucxFabric, railBytesPerSec, latencyNs);
            default -> throw new UserError("--provider " + provider + " is not one the in-JVM run knows; use " + PROVIDERS);
        };
    }

    /** The UCX transports ({@code UCX_TLS}) for a {@code --fabric} of the ucx provider. */
    static String ucxTls(String fabric) {
        return switch (fabric == null ? "sm" : fabric.toLowerCase(Locale.ROOT)) {
            case "sm", "shm" -> "sm,self";
            case "tcp" -> "tcp";
            default -> throw new UserError("--fabric " + fabric + " is not a fabric of the ucx provider; use --fabric sm (shared memory) or --fabric tcp");
        };
    }

    private static InJvmNics ucx(String fabric, List<Long> railBytesPerSec, long latencyNs) {
        String tls = ucxTls(fabric);
        if (latencyNs != 0 || railBytesPerSec.stream().anyMatch(r -> r != Long.MAX_VALUE)) {
            throw new UserError("the ucx provider's rails cannot be shaped (UCX runs them at its own speed); drop --rail-rates and --latency-us, "
                + "or use --provider soft");
        }
        Map<String, String> options = Map.of("tls", tls, "ports", Integer.toString(railBytesPerSec.size()));
        RdmaProvider tx = openUcx(options, "sender");
        try {
            RdmaProvider rx = openUcx(options, "receiver");
            return new InJvmNics("ucx", fabric == null ? "sm" : fabric.toLowerCase(Locale.ROOT), tx, tx.devices().get(0).name(),
                rx, rx.devices().get(0).name());
        } catch (RuntimeException e) {
            tx.close();
            throw e;
        }
    }

    private static RdmaProvider openUcx(Map<String, String> options, String side) {
        try {
            return RdmaProviders.open("ucx", options);
        } catch (VerbsException e) {
            throw new UserError("--provider ucx: the " + side + " host's provider did not open: " + e.getMessage());
        }
    }

    /** {@code soft} or {@code ucx}. */
    String provider() {
        return provider;
    }

    /** {@code mem} for soft; {@code sm} or {@code tcp} for ucx. */
    String fabric() {
        return fabric;
    }

    RdmaProvider senderProvider() {
        return sender;
    }

    String senderDevice() {
        return senderDevice;
    }

    RdmaProvider receiverProvider() {
        return receiver;
    }

    String receiverDevice() {
        return receiverDevice;
    }

    /** Where the receiver listens: its device on its provider's fabric, any port. */
    PortAddress receiverAddress() {
        return new PortAddress("soft".equals(provider) ? "mem" : "ucx", receiverDevice, 0);
    }

    /** A short description for report headers, e.g. {@code soft provider, in-JVM mem fabric}. */
    String describe() {
        return "soft".equals(provider) ? "soft provider, in-JVM mem fabric" : "ucx provider, UCX " + ucxTls(fabric) + " in one JVM";
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            sender.close();
        } finally {
            if (receiver != sender) {
                receiver.close();
            }
        }
    }
}
