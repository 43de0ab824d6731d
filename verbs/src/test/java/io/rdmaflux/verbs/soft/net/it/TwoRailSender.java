package io.rdmaflux.verbs.soft.net.it;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.VerbsException;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.WcStatus;
import io.rdmaflux.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.locks.LockSupport;

/**
 * Host A of the two-rail integration run: connects to {@link TwoRailReceiver} with one RC QP per
 * rail (retrying while it is not up yet), RDMA-WRITEs every rail's region in 256 KiB chunks (all
 * rails at once), SENDs the check messages and the final SEND_WITH_IMM per rail, waits for
 * VERIFIED, and prints each rail's write rate. With {@code --rail-limits-mbit 800,200} it also
 * checks that no rail ran faster than 1.25x its shaped rate, i.e. that each rail's data really
 * took that rail's link. Exit code 0 on success.
 *
 * <pre>
 * java ... TwoRailSender --connect 10.77.1.2:7471 --addresses 10.77.1.1,10.77.2.1 --bytes-per-rail 16777216 --sends-per-rail 64 --rail-limits-mbit 800,200 --timeout-s 60
 * </pre>
 */
public final class TwoRailSender {
    private static final int MAX_OUTSTANDING_WRITES = 32;

    private TwoRailSender() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the sender; returns the exit code. */
    public static int run(String[] args) {
        var o = TwoRailIt.options(args, List.of("connect", "addresses", "bytes-per-rail", "sends-per-rail", "rail-limits-mbit", "timeout-s"));
        String connect = o.getOrDefault("connect", "127.0.0.1:7471");
        int colon = connect.lastIndexOf(':');
        PortAddress to = new PortAddress("net", connect.substring(0, colon), Integer.parseInt(connect.substring(colon + 1)));
        long bytesPerRail = Long.parseLong(o.getOrDefault("bytes-per-rail", String.valueOf(16 << 20)));
        int sends = Integer.parseInt(o.getOrDefault("sends-per-rail", "64"));
        long deadline = System.nanoTime() + Long.parseLong(o.getOrDefault("timeout-s", "60")) * 1_000_000_000L;
        String limits = o.get("rail-limits-mbit");
        try (RdmaProvider p = TwoRailIt.open("it-sender", o.getOrDefault("addresses", "127.0.0.1,127.0.0.1"))) {
            int rails = p.devices().get(0).ports().size();
            ProtectionDomain pd = p.devices().get(0).allocateProtectionDomain();
            CompletionQueue cq = p.devices().get(0).createCompletionQueue(8192);
            List<MemoryRegion> sources = new ArrayList<>();
            List<QueuePair> qps = new ArrayList<>();
            List<QpEndpoint> mine = new ArrayList<>();
            MemoryRegion messages = pd.allocateMemory((long) rails * sends * TwoRailIt.SEND_BYTES, Access.LOCAL_WRITE);
            MemoryRegion inbox = pd.allocateMemory(64, Access.LOCAL_WRITE);
            for (int r = 1; r <= rails; r++) {
                MemoryRegion src = pd.allocateMemory(bytesPerRail, Access.LOCAL_WRITE);
                TwoRailIt.fill(src, 0, (int) bytesPerRail, r, 0);
                sources.add(src);
                for (int s = 0; s < sends; s++) {
                    TwoRailIt.fill(messages, ((long) (r - 1) * sends + s) * TwoRailIt.SEND_BYTES, TwoRailIt.SEND_BYTES, r, s);
                }
                QueuePair qp = pd.createQueuePair(TwoRailIt.rc(p, r, cq, sends).build());
                qps.add(qp);
                mine.add(qp.localEndpoint());
            }
            CmParams reply = connectWithRetry(p, to, new CmParams(mine, new byte[0]), deadline);
            ByteBuffer pdata = ByteBuffer.wrap(reply.privateData());
            long[] remote = new long[rails];
            int[] rkeys = new int[rails];
            int[] udQpns = new int[rails];
            for (int r = 0; r < rails; r++) {
                qps.get(r).connect(reply.endpoints().get(r));
                remote[r] = pdata.getLong();
                rkeys[r] = pdata.getInt();
                if (r == 0) {
                    qps.get(0).postReceive(new ReceiveWorkRequest().wrId(-1).sge(inbox, 0, 64));
                }
                long length = pdata.getLong();
                udQpns[r] = pdata.getInt();
                if (length < bytesPerRail) {
                    throw new VerbsException("receiver region of rail " + (r + 1) + " is " + length + " bytes, less than " + bytesPerRail);
                }
            }
            CompletionQueue udCq = p.devices().get(0).createCompletionQueue(rails * (TwoRailIt.UD_DATAGRAMS + 8));
            MemoryRegion datagrams = pd.allocateMemory((long) rails * TwoRailIt.UD_DATAGRAMS * TwoRailIt.UD_BYTES, Access.LOCAL_WRITE);
            for (int r = 1; r <= rails; r++) {
                QueuePair ud = pd.createQueuePair(TwoRailIt.ud(p, r, udCq).build());
                ud.init();
                ud.readyToReceive();
                ud.readyToSend();
                io.rdmaflux.verbs.AddressHandle ah = pd.createAddressHandle(p.devices().get(0).port(r), reply.endpoints().get(r - 1).address());
                for (int d = 0; d < TwoRailIt.UD_DATAGRAMS; d++) {
                    long off = ((long) (r - 1) * TwoRailIt.UD_DATAGRAMS + d) * TwoRailIt.UD_BYTES;
                    TwoRailIt.fillDatagram(datagrams, off, r, d);
                    ud.postSend(new SendWorkRequest().wrId(d).opcode(WrOpcode.SEND).sge(datagrams, off, TwoRailIt.UD_BYTES)
                        .ud(ah, udQpns[r - 1], TwoRailIt.UD_QKEY).signaled(d == TwoRailIt.UD_DATAGRAMS - 1));
                }
            }
            TwoRailIt.await(udCq, rails, deadline, wc -> {
                if (wc.status() != WcStatus.SUCCESS) {
                    throw new VerbsException("UD send failed: " + wc);
                }
            }, "UD sends");
            System.out.println("sender: " + rails + " rails x " + TwoRailIt.UD_DATAGRAMS + " UD datagrams of " + TwoRailIt.UD_BYTES + " bytes sent");
            System.out.println("sender: connected to " + to + ", rails " + reply.endpoints().stream().map(e -> e.address().toString()).toList());
            long chunks = (bytesPerRail + TwoRailIt.WRITE_CHUNK - 1) / TwoRailIt.WRITE_CHUNK;
            long[] posted = new long[rails];
            long[] done = new long[rails];
            long[] finishedAt = new long[rails];
            String[] failure = {null};
            long start = System.nanoTime();
            boolean verified = false;
            int sendCompletions = 0;
            while (true) {
                for (int r = 0; r < rails; r++) {
                    while (posted[r] < chunks && posted[r] - done[r] < MAX_OUTSTANDING_WRITES) {
                        long off = posted[r] * TwoRailIt.WRITE_CHUNK;
                        int len = (int) Math.min(TwoRailIt.WRITE_CHUNK, bytesPerRail - off);
                        if (!qps.get(r).postSend(new SendWorkRequest().wrId(((long) r << 40) | posted[r]).opcode(WrOpcode.RDMA_WRITE)
                            .sge(sources.get(r), off, len).remoteAddress(remote[r] + off).rkey(rkeys[r]))) {
                            break;
                        }
                        posted[r]++;
                        if (posted[r] == chunks) {
                            for (int s = 0; s < sends; s++) {
                                long moff = ((long) r * sends + s) * TwoRailIt.SEND_BYTES;
                                qps.get(r).postSend(new SendWorkRequest().wrId((1L << 62) | s).opcode(WrOpcode.SEND)
                                    .sge(messages, moff, TwoRailIt.SEND_BYTES).signaled(s == sends - 1));
                            }
                            qps.get(r).postSend(new SendWorkRequest().wrId(1L << 61).opcode(WrOpcode.SEND_WITH_IMM)
                                .immediate(TwoRailIt.FINAL_IMM + r + 1).sge(messages, 0, 0));
                        }
                    }
                }
                int[] sc = {0};
                boolean[] v = {false};
                int got = cq.poll(256, wc -> {
                    if (wc.status() != WcStatus.SUCCESS) {
                        if (failure[0] == null) {
                            failure[0] = wc.toString();
                        }
                        return;
                    }
                    if (wc.opcode() == WcOpcode.RECV) {
                        v[0] = wc.hasImmediate() && wc.immediate() == TwoRailIt.VERIFIED_IMM;
                    } else if (wc.opcode() == WcOpcode.RDMA_WRITE) {
                        int r = (int) (wc.wrId() >>> 40);
                        if (++done[r] == chunks) {
                            finishedAt[r] = System.nanoTime();
                        }
                    } else {
                        sc[0]++;
                    }
                });
                sendCompletions += sc[0];
                verified |= v[0];
                if (failure[0] != null) {
                    throw new VerbsException("a work request failed: " + failure[0]);
                }
                if (verified && sendCompletions == 2 * rails) {
                    break;
                }
                if (got == 0) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new VerbsException("timed out: writes done " + java.util.Arrays.toString(done) + " of " + chunks
                            + ", send completions " + sendCompletions + ", verified " + verified);
                    }
                    Thread.onSpinWait();
                }
            }
            boolean ok = true;
            String[] limit = limits == null ? new String[0] : limits.split(",");
            for (int r = 0; r < rails; r++) {
                double seconds = (finishedAt[r] - start) / 1e9;
                double mbit = bytesPerRail * 8 / seconds / 1e6;
                String line = String.format("sender: rail %d: %d bytes RDMA WRITE in %.3f s = %.1f Mbit/s", r + 1, bytesPerRail, seconds, mbit);
                if (r < limit.length) {
                    double cap = Double.parseDouble(limit[r].trim());
                    boolean within = mbit <= 1.25 * cap;
                    ok &= within;
                    line += within ? " (shaped link " + cap + " Mbit/s: ok)" : " FASTER than its shaped link of " + cap + " Mbit/s: the data did not take this rail";
                }
                System.out.println(line);
            }
            System.out.println("sender: receiver verified all data");
            return ok ? 0 : 1;
        } catch (RuntimeException e) {
            System.err.println("sender: FAILED: " + e);
            return 1;
        }
    }

    private static CmParams connectWithRetry(RdmaProvider p, PortAddress to, CmParams request, long deadlineNs) {
        while (true) {
            try {
                return p.connectionManager().connect(to, request, 5_000_000_000L).join();
            } catch (CompletionException e) {
                String m = String.valueOf(e.getCause() == null ? e : e.getCause().getMessage());
                if (!m.contains("refused") || System.nanoTime() - deadlineNs > 0) {
                    throw new VerbsException("cannot connect to the receiver at " + to + ": " + m, e);
                }
                // the receiver JVM is still starting: try again shortly
                LockSupport.parkNanos(100_000_000L);
            }
        }
    }
}
