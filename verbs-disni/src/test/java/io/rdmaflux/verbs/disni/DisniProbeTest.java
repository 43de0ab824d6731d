package io.rdmaflux.verbs.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every outcome of {@link DisniProbe}, with the library loader and the sysfs directory injected. */
class DisniProbeTest {
    @TempDir
    Path sysfs;

    private static final DisniProbe.LibraryLoader LOADS = () -> null;
    private static final DisniProbe.LibraryLoader MISSING = () -> "UnsatisfiedLinkError: no disni in java.library.path";

    @Test
    void libraryAndDeviceMeanAvailable() throws IOException {
        Files.createDirectory(sysfs.resolve("mlx5_0"));
        assertEquals(Optional.empty(), DisniProbe.probe(LOADS, sysfs));
        assertEquals(List.of("mlx5_0"), DisniProbe.devices(sysfs));
    }

    @Test
    void aMissingLibraryIsNamedWithHowToBuildAndPointAtIt() throws IOException {
        Files.createDirectory(sysfs.resolve("rxe0"));
        String reason = DisniProbe.probe(MISSING, sysfs).orElseThrow();
        assertTrue(reason.contains("libdisni") && reason.contains("java.library.path") && reason.contains("no disni"), reason);
        assertFalse(reason.contains("no RDMA device"), reason);
    }

    @Test
    void noDeviceIsNamedWithTheDirectoryAndTheFix() {
        String reason = DisniProbe.probe(LOADS, sysfs.resolve("absent")).orElseThrow();
        assertTrue(reason.contains("no RDMA device") && reason.contains("absent") && reason.contains("rdma-core"), reason);
        assertEquals(reason, DisniProbe.probe(LOADS, sysfs).orElseThrow().replace(sysfs.toString(), sysfs.resolve("absent").toString()),
            "an empty directory reads the same as a missing one");
    }

    @Test
    void bothMissingGiveOneMessageNamingBoth() {
        String reason = DisniProbe.probe(MISSING, sysfs).orElseThrow();
        assertTrue(reason.contains("libdisni") && reason.contains("no RDMA device"), reason);
        assertEquals(1, reason.lines().count(), "one message, one line");
    }

    @Test
    void theRealLoaderReportsTheMissingLibraryHereAndDoesNotThrow() {
        // no machine this project builds on has libdisni; the probe must say so, not throw
        Optional<String> reason = DisniProbe.probe();
        reason.ifPresent(r -> assertTrue(r.contains("libdisni") || r.contains("no RDMA device"), r));
        assertEquals(reason, DisniProbe.probe(), "a second probe (class init already failed) says the same");
    }
}
