package io.rdmaflux.verbs.soft.net.it;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.ConnectionManager;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Host B of the two-rail integration run: listens, accepts one connection with one RC QP per rail,
 * exposes one region per rail (address, rkey in the private data), checks every SEND and every
 * region byte-exact, answers VERIFIED. Exit code 0 when all data arrived intact.
 *
 * <pre>
 * java ... TwoRailReceiver --listen 10.77.1.2:7471 --addresses 10.77.1.2,10.77.2.2 --bytes-per-rail 16777216 --sends-per-rail 64 --timeout-s 60
 * </pre>
 */
public final class TwoRailReceiver {
    private TwoRailReceiver() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs the receiver; returns the exit code. */
    public static int run(String[] args) {
        var o = TwoRailIt.options(args, List.of("listen", "addresses", "bytes-per-rail", "sends-per-rail", "ud-min-fraction", "timeout-s"));
        String listen = o.getOrDefault("listen", "127.0.0.1:7471");
        int colon = listen.lastIndexOf(':');
        PortAddress at = new PortAddress("net", listen.substring(0, colon), Integer.parseInt(listen.substring(colon + 1)));
        long bytesPerRail = Long.parseLong(o.getOrDefault("bytes-per-rail", String.valueOf(16 << 20)));
        int sends = Integer.parseInt(o.getOrDefault("sends-per-rail", "64"));
        double udMinFraction = Double.parseDouble(o.getOrDefault("ud-min-fraction", "0.95"));
        long deadline = System.nanoTime() + Long.parseLong(o.getOrDefault("timeout-s", "60")) * 1_000_000_000L;
        try (RdmaProvider p = TwoRailIt.open("it-receiver", o.getOrDefault("addresses", "127.0.0.1,127.0.0.1"))) {
            int rails = p.devices().get(0).ports().size();
            ProtectionDomain pd = p.devices().get(0).allocateProtectionDomain();
            CompletionQueue cq = p.devices().get(0).createCompletionQueue(8192);
            List<MemoryRegion> regions = new ArrayList<>();
            for (int r = 1; r <= rails; r++) {
                regions.add(pd.allocateMemory(bytesPerRail, Access.LOCAL_WRITE | Access.REMOTE_WRITE));
            }
            int slots = sends + 1;
            MemoryRegion inbox = pd.allocateMemory((long) rails * slots * TwoRailIt.SEND_BYTES, Access.LOCAL_WRITE);
            MemoryRegion outbox = pd.allocateMemory(64, Access.LOCAL_WRITE);
            CompletionQueue udCq = p.devices().get(0).createCompletionQueue(rails * (TwoRailIt.UD_DATAGRAMS + 8));
            MemoryRegion udInbox = pd.allocateMemory((long) rails * TwoRailIt.UD_DATAGRAMS * TwoRailIt.UD_BYTES, Access.LOCAL_WRITE);
            List<QueuePair> udQps = new ArrayList<>();
            for (int r = 1; r <= rails; r++) {
                QueuePair ud = pd.createQueuePair(TwoRailIt.ud(p, r, udCq).build());
                ud.init();
                ud.readyToReceive();
                ud.readyToSend();
                for (int d = 0; d < TwoRailIt.UD_DATAGRAMS; d++) {
                    long off = ((long) (r - 1) * TwoRailIt.UD_DATAGRAMS + d) * TwoRailIt.UD_BYTES;
                    ud.postReceive(new ReceiveWorkRequest().wrId(((long) r << 32) | d).sge(udInbox, off, TwoRailIt.UD_BYTES));
                }
                udQps.add(ud);
            }
            List<QueuePair> qps = new ArrayList<>();
            AtomicReference<String> problem = new AtomicReference<>();
            ConnectionManager.Listener listener = p.connectionManager().listen(at, (from, request) -> {
                if (request.endpoints().size() != rails || !qps.isEmpty()) {
                    return CompletableFuture.failedFuture(new VerbsException("expected one connection of " + rails + " rails but got "
                        + request.endpoints().size() + (qps.isEmpty() ? "" : " (already connected)")));
                }
                ByteBuffer pdata = ByteBuffer.allocate(rails * 24);
                List<QpEndpoint> mine = new ArrayList<>();
                for (int r = 1; r <= rails; r++) {
                    QueuePair qp = pd.createQueuePair(TwoRailIt.rc(p, r, cq, sends).build());
                    qp.connect(request.endpoints().get(r - 1));
                    for (int s = 0; s < slots; s++) {
                        long off = ((long) (r - 1) * slots + s) * TwoRailIt.SEND_BYTES;
                        qp.postReceive(new ReceiveWorkRequest().wrId(((long) r << 32) | s).sge(inbox, off, TwoRailIt.SEND_BYTES));
                    }
                    qps.add(qp);
                    mine.add(qp.localEndpoint());
                    MemoryRegion mr = regions.get(r - 1);
                    pdata.putLong(mr.address()).putInt(mr.rkey()).putLong(mr.length()).putInt(udQps.get(r - 1).qpNumber());
                }
                System.out.println("receiver: connection from " + from + ", rails " + mine.stream().map(e -> e.address().toString()).toList());
                return CompletableFuture.completedFuture(new CmParams(mine, pdata.array()));
            });
            System.out.println("receiver: listening at " + listener.address());
            int[] finals = {0};
            TwoRailIt.await(cq, rails * slots, deadline, wc -> {
                int rail = (int) (wc.wrId() >>> 32);
                int seq = (int) wc.wrId();
                if (wc.status() != WcStatus.SUCCESS || wc.opcode() != WcOpcode.RECV) {
                    problem.compareAndSet(null, "rail " + rail + " receive " + seq + " failed: " + wc);
                    return;
                }
                long off = ((long) (rail - 1) * slots + seq) * TwoRailIt.SEND_BYTES;
                if (wc.hasImmediate() && wc.immediate() == TwoRailIt.FINAL_IMM + rail) {
                    finals[0]++;
                    return;
                }
                long bad = TwoRailIt.firstMismatch(inbox, off, wc.byteLength(), rail, seq);
                if (wc.byteLength() != TwoRailIt.SEND_BYTES || bad >= 0) {
                    problem.compareAndSet(null, "rail " + rail + " SEND " + seq + " corrupt at byte " + bad + " (length " + wc.byteLength() + ")");
                }
            }, "SENDs");
            if (finals[0] != rails) {
                problem.compareAndSet(null, "expected " + rails + " final SENDs but got " + finals[0]);
            }
            for (int r = 1; r <= rails && problem.get() == null; r++) {
                long bad = TwoRailIt.firstMismatch(regions.get(r - 1), 0, bytesPerRail, r, 0);
                if (bad >= 0) {
                    problem.set("rail " + r + " region differs at byte " + bad + " of " + bytesPerRail);
                }
            }
            // UD: whatever arrived by now (or within a grace period) must be intact, and enough of it
            int[][] seen = new int[rails][TwoRailIt.UD_DATAGRAMS];
            int[] udGot = new int[rails];
            long graceEnd = System.nanoTime() + 2_000_000_000L;
            int total = 0;
            while (total < rails * TwoRailIt.UD_DATAGRAMS && System.nanoTime() - graceEnd < 0) {
                int n = udCq.poll(64, wc -> {
                    int rail = (int) (wc.wrId() >>> 32);
                    long off = ((long) (rail - 1) * TwoRailIt.UD_DATAGRAMS + (int) wc.wrId()) * TwoRailIt.UD_BYTES;
                    int seq = wc.status() == WcStatus.SUCCESS ? TwoRailIt.checkDatagram(udInbox, off, wc.byteLength(), rail) : -1;
                    if (seq < 0) {
                        problem.compareAndSet(null, "rail " + rail + " UD datagram corrupt or failed: " + wc);
                    } else if (seen[rail - 1][seq]++ == 0) {
                        udGot[rail - 1]++;
                    }
                });
                total += n;
                if (n == 0) {
                    Thread.onSpinWait();
                }
            }
            for (int r = 1; r <= rails; r++) {
                System.out.println("receiver: rail " + r + ": " + udGot[r - 1] + " of " + TwoRailIt.UD_DATAGRAMS + " UD datagrams of "
                    + TwoRailIt.UD_BYTES + " bytes arrived intact");
                if (udGot[r - 1] < udMinFraction * TwoRailIt.UD_DATAGRAMS) {
                    problem.compareAndSet(null, "rail " + r + ": only " + udGot[r - 1] + " UD datagrams arrived (at least "
                        + udMinFraction + " of " + TwoRailIt.UD_DATAGRAMS + " expected)");
                }
            }
            String verdict = problem.get();
            if (verdict != null) {
                System.err.println("receiver: FAILED: " + verdict);
                return 1;
            }
            System.out.println("receiver: " + rails + " rails x " + bytesPerRail + " bytes RDMA WRITE and " + sends + " SENDs verified byte-exact");
            qps.get(0).postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND_WITH_IMM).immediate(TwoRailIt.VERIFIED_IMM).sge(outbox, 0, 8));
            int[] ok = {0};
            TwoRailIt.await(cq, 1, deadline, wc -> ok[0] = wc.status() == WcStatus.SUCCESS ? 1 : 0, "VERIFIED send");
            listener.close();
            return ok[0] == 1 ? 0 : 1;
        } catch (RuntimeException e) {
            System.err.println("receiver: FAILED: " + e);
            return 1;
        }
    }
}
