package io.rdmaflux.samples;

import io.rdmaflux.core.RdmaMessage;
import reactor.core.publisher.Flux;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The pipeline's input: a file, or every regular file under a directory in path order, seen as one
 * byte stream capped at {@code limitBytes}. {@link #chunks} maps each file and emits chunk-sized
 * slices of the mapping as messages (no copy on the producer side) while updating a SHA-256 of
 * the source bytes.
 *
 * <p>Record mode ({@code wholeLines}) ends each chunk after its last newline, so no record is split
 * across messages (a line longer than a chunk is split).
 */
final class FileSource {
    private final List<Path> files;
    private final List<Long> lengths;
    private final long totalBytes;
    private final long availableBytes;

    private FileSource(List<Path> files, List<Long> lengths, long totalBytes, long availableBytes) {
        this.files = files;
        this.lengths = lengths;
        this.totalBytes = totalBytes;
        this.availableBytes = availableBytes;
    }

    /**
     * Opens {@code input} for streaming.
     *
     * @throws UserError if it does not exist, cannot be read, or holds no bytes
     */
    static FileSource open(Path input, long limitBytes) {
        if (!Files.exists(input)) {
            throw new UserError("input " + input + " does not exist; give an existing file or directory");
        }
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(input)) {
            try (Stream<Path> walk = Files.walk(input)) {
                walk.filter(Files::isRegularFile).sorted().forEach(files::add);
            } catch (IOException | java.io.UncheckedIOException e) {
                throw new UserError("cannot list directory " + input + ": " + e.getMessage());
            }
        } else {
            files.add(input);
        }
        List<Path> kept = new ArrayList<>();
        List<Long> lengths = new ArrayList<>();
        long available = 0;
        long total = 0;
        for (Path f : files) {
            if (!Files.isReadable(f)) {
                throw new UserError("input " + f + " is not readable; check its permissions");
            }
            long size;
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                size = ch.size();
            } catch (AccessDeniedException e) {
                throw new UserError("input " + f + " is not readable; check its permissions");
            } catch (NoSuchFileException e) {
                throw new UserError("input " + f + " does not exist");
            } catch (IOException e) {
                throw new UserError("cannot open input " + f + ": " + e.getMessage());
            }
            available += size;
            long take = Math.min(size, limitBytes - total);
            if (take > 0) {
                kept.add(f);
                lengths.add(take);
                total += take;
            }
        }
        if (total == 0) {
            throw new UserError("input " + input + " holds no bytes to stream; give a non-empty file or directory");
        }
        return new FileSource(List.copyOf(kept), List.copyOf(lengths), total, available);
    }

    /** Bytes that will be streamed. */
    long totalBytes() {
        return totalBytes;
    }

    /** Bytes the input holds in all (before the cap). */
    long availableBytes() {
        return availableBytes;
    }

    int fileCount() {
        return files.size();
    }

    /**
     * The source as messages of at most {@code chunkBytes}; {@code sourceDigest} is updated with
     * every byte as it is emitted. Cold; subscribe once.
     */
    Flux<RdmaMessage> chunks(int chunkBytes, boolean wholeLines, MessageDigest sourceDigest) {
        return Flux.range(0, files.size()).concatMap(i -> fileChunks(files.get(i), lengths.get(i), chunkBytes, wholeLines, sourceDigest), 1);
    }

    private static Flux<RdmaMessage> fileChunks(Path file, long length, int chunkBytes, boolean wholeLines, MessageDigest digest) {
        return Flux.using(() -> FileChannel.open(file, StandardOpenOption.READ), ch -> Flux.generate(() -> 0L, (Long pos, reactor.core.publisher.SynchronousSink<RdmaMessage> sink) -> {
            if (pos >= length) {
                sink.complete();
                return pos;
            }
            try {
                int len = (int) Math.min(chunkBytes, length - pos);
                MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, pos, len);
                if (wholeLines && pos + len < length) {
                    int end = len;
                    while (end > 0 && map.get(end - 1) != '\n') {
                        end--;
                    }
                    if (end > 0) {
                        len = end;
                    }
                }
                java.nio.ByteBuffer slice = map.slice(0, len);
                digest.update(slice.duplicate());
                sink.next(RdmaMessage.of(slice));
                return pos + len;
            } catch (IOException e) {
                sink.error(new UserError("reading " + file + " failed at byte " + pos + ": " + e.getMessage(), e));
                return pos;
            }
        }), ch -> {
            try {
                ch.close();
            } catch (IOException ignored) {
                // read-only channel: nothing was written that a failed close could lose
            }
        });
    }
}
