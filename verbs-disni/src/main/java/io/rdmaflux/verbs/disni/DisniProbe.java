package io.rdmaflux.verbs.disni;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * Whether DiSNI can run here, and if not, one message naming everything that is missing and how to
 * fix each. Two things must hold: DiSNI's JNI library {@code libdisni.so} loads (its jar ships no
 * native code: DiSNI's {@code NativeDispatcher} calls {@code System.loadLibrary("disni")}, which
 * looks in {@code java.library.path}), and the kernel exposes at least one RDMA device (what
 * {@code ibv_get_device_list} reads: the entries of {@code /sys/class/infiniband}).
 *
 * <p>{@link #probe()} runs the real checks; the two inputs are injectable so that every outcome is
 * tested on a machine without RDMA hardware. {@link DisniAvailability} runs it once and caches it.
 */
final class DisniProbe {
    /** Where the kernel lists RDMA devices. */
    static final Path SYSFS_DEVICES = Path.of("/sys/class/infiniband");

    /** Loads the JNI library; returns null on success, or why it failed. */
    @FunctionalInterface
    interface LibraryLoader {
        @Nullable String load();
    }

    private DisniProbe() {
    }

    /** The real probe: DiSNI's own loader, then {@link #SYSFS_DEVICES}. */
    static Optional<String> probe() {
        return probe(DisniProbe::loadDisni, SYSFS_DEVICES);
    }

    /**
     * Probes with the given inputs.
     *
     * @return why DiSNI cannot run (one message, every missing piece with its fix), or empty
     */
    static Optional<String> probe(LibraryLoader loader, Path sysfsDevices) {
        List<String> missing = new ArrayList<>();
        String library = loader.load();
        if (library != null) {
            missing.add("libdisni is not on java.library.path (" + library + "): build DiSNI's native library "
                + "(github.com/zrlio/disni: cd libdisni && ./autoprepare.sh && ./configure --with-jdk=$JAVA_HOME && make install) "
                + "and run with -Djava.library.path=/usr/local/lib (or set LD_LIBRARY_PATH)");
        }
        List<String> devices = devices(sysfsDevices);
        if (devices.isEmpty()) {
            missing.add("no RDMA device: " + sysfsDevices + " lists none (ibv_devices shows the same); "
                + "install an InfiniBand/RoCE NIC and its driver (rdma-core, e.g. apt-get install rdma-core ibverbs-providers), "
                + "or use soft-RoCE (rdma link add rxe0 type rxe netdev eth0)");
        }
        return missing.isEmpty() ? Optional.empty() : Optional.of(String.join("; and ", missing));
    }

    /** The device names under {@code sysfsDevices}, sorted; empty when it does not exist. */
    static List<String> devices(Path sysfsDevices) {
        if (!Files.isDirectory(sysfsDevices)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(sysfsDevices)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private static @Nullable String loadDisni() {
        try {
            Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, DisniProbe.class.getClassLoader());
            return null;
        } catch (LinkageError e) {
            // UnsatisfiedLinkError inside an ExceptionInInitializerError, or NoClassDefFoundError on a retry
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            return cause.getClass().getSimpleName() + ": " + cause.getMessage();
        } catch (ClassNotFoundException e) {
            return "the DiSNI jar is not on the class path (" + e.getMessage() + ")";
        }
    }
}
