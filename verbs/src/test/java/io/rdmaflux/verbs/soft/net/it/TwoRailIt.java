package io.rdmaflux.verbs.soft.net.it;

import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.RdmaProviders;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WorkCompletion;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What the two-host, two-rail integration pair ({@link TwoRailSender} in host A,
 * {@link TwoRailReceiver} in host B) share: options, the data pattern, QP attributes, and a
 * completion wait with a deadline. Each rail is one port of one soft device on the IP fabric,
 * bound to that rail's address; per rail the sender RDMA-WRITEs {@code bytesPerRail} bytes of a
 * rail-specific pattern into a region of the receiver and then SENDs {@code sendsPerRail} messages
 * whose bytes the receiver checks, and a final SEND_WITH_IMM; the receiver then checks every byte
 * of every region and answers VERIFIED on rail 1.
 */
final class TwoRailIt {
    static final int SEND_BYTES = 4096;
    /** UD datagrams per rail and their size (above the veth MTU of 1500, so they travel as IP fragments). */
    static final int UD_DATAGRAMS = 256;
    static final int UD_BYTES = 2048;
    static final int UD_QKEY = 0x11D;
    static final int WRITE_CHUNK = 256 << 10;
    static final int FINAL_IMM = 0x00D0E000;
    static final int VERIFIED_IMM = 0x00600D00;
    /** TCP does not lose frames; a long transport timeout only guards against a dead peer. */
    static final long RETRY_TIMEOUT_NS = 2_000_000_000L;

    private TwoRailIt() {
    }

    /** {@code --key value} pairs. */
    static Map<String, String> options(String[] args, List<String> known) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            String k = args[i];
            if (!k.startsWith("--") || i + 1 >= args.length || !known.contains(k.substring(2))) {
                throw new IllegalArgumentException("bad argument '" + k + "'; options are " + known.stream().map(s -> "--" + s + " <value>").toList());
            }
            m.put(k.substring(2), args[i + 1]);
        }
        return m;
    }

    static RdmaProvider open(String name, String addresses) {
        return RdmaProviders.open("soft", Map.of("fabric", "net", "addresses", addresses, "name", name));
    }

    static QpInitAttributes.Builder ud(RdmaProvider p, int rail, CompletionQueue cq) {
        return QpInitAttributes.builder(QpType.UD, p.devices().get(0).port(rail)).cq(cq).qkey(UD_QKEY)
            .maxSendWr(UD_DATAGRAMS + 8).maxReceiveWr(UD_DATAGRAMS + 8);
    }

    /** Writes datagram {@code seq} of {@code rail}: the sequence number, then the pattern. */
    static void fillDatagram(MemoryRegion mr, long at, int rail, int seq) {
        mr.buffer().putInt((int) at, seq);
        for (int i = 4; i < UD_BYTES; i++) {
            mr.buffer().put((int) (at + i), patternByte(rail, 1_000_000 + seq, i));
        }
    }

    /** The sequence number of a received datagram, or -1 if any byte is wrong. */
    static int checkDatagram(MemoryRegion mr, long at, int length, int rail) {
        int seq = mr.buffer().getInt((int) at);
        if (length != UD_BYTES || seq < 0 || seq >= UD_DATAGRAMS) {
            return -1;
        }
        for (int i = 4; i < UD_BYTES; i++) {
            if (mr.buffer().get((int) (at + i)) != patternByte(rail, 1_000_000 + seq, i)) {
                return -1;
            }
        }
        return seq;
    }

    static QpInitAttributes.Builder rc(RdmaProvider p, int rail, CompletionQueue cq, int sendsPerRail) {
        return QpInitAttributes.builder(QpType.RC, p.devices().get(0).port(rail)).cq(cq)
            .maxSendWr(512).maxReceiveWr(sendsPerRail + 8).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(7);
    }

    /** The byte at {@code offset} of rail {@code rail}'s region (and of SEND {@code seq} when offset is within it). */
    static byte patternByte(int rail, long seq, long offset) {
        long x = offset * 0x9E3779B97F4A7C15L + rail * 0xC2B2AE3D27D4EB4FL + seq * 0x165667B19E3779F9L;
        return (byte) (x ^ (x >>> 29) ^ (x >>> 47));
    }

    static void fill(MemoryRegion mr, long at, int length, int rail, long seq) {
        for (int i = 0; i < length; i++) {
            mr.buffer().put((int) (at + i), patternByte(rail, seq, i));
        }
    }

    /** -1 when equal, else the first differing offset. */
    static long firstMismatch(MemoryRegion mr, long at, long length, int rail, long seq) {
        for (long i = 0; i < length; i++) {
            if (mr.buffer().get((int) (at + i)) != patternByte(rail, seq, i)) {
                return i;
            }
        }
        return -1;
    }

    /** Polls {@code cq} into {@code sink} until {@code n} completions were seen; throws past {@code deadlineNs}. */
    static void await(CompletionQueue cq, int n, long deadlineNs, Consumer<WorkCompletion> sink, String what) {
        int[] seen = {0};
        while (seen[0] < n) {
            int got = cq.poll(Math.min(256, n - seen[0]), wc -> {
                seen[0]++;
                sink.accept(wc);
            });
            if (got == 0) {
                if (System.nanoTime() - deadlineNs > 0) {
                    throw new VerbsException("timed out waiting for " + what + ": " + seen[0] + " of " + n + " completions");
                }
                Thread.onSpinWait();
            }
        }
    }
}
