package io.rdmaflux.samples;

import io.rdmaflux.striping.RailsSpec;
import io.rdmaflux.striping.verbs.OneSidedRails;
import io.rdmaflux.striping.verbs.RailBuffers;
import io.rdmaflux.striping.verbs.RdmaGet;
import io.rdmaflux.striping.verbs.RdmaPut;
import io.rdmaflux.striping.verbs.RdmaRail;
import io.rdmaflux.striping.verbs.RdmaTransfer;
import io.rdmaflux.striping.CommunicationScheduler;
import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CmParams;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.ConnectionManager;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.PortAddress;
import io.rdmaflux.verbs.ProtectionDomain;
import io.rdmaflux.verbs.QpEndpoint;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.WorkCompletion;
import io.rdmaflux.verbs.WrOpcode;
import io.rdmaflux.verbs.soft.SoftProvider;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.jspecify.annotations.Nullable;

import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * OSU one-sided bandwidth (osu_put_bw, osu_get_bw) on the verbs layer: the client posts
 * {@code window} RDMA WRITEs (put-bw) or RDMA READs (get-bw) of one size to a region the server
 * registered, waits for all of them to complete, and repeats {@code iterations} times; bandwidth
 * is the bytes over the time of the timed iterations. Transfers go over rails through
 * rail-striping's {@link OneSidedRails} (seed 002 §3: one-sided put/get over multiple rails, large
 * transfers fragmented over the rails by the {@code --policy}); each rail is one RC queue pair.
 *
 * <p><b>Setup</b> (as {@code rdma_cm} applications do): the client connects through the provider's
 * {@link ConnectionManager} with one QP endpoint per rail and private data
 * {@code magic 'RBO1' (4) | test (1) | region bytes (8)}; the server creates its QPs, registers a
 * region of that size (REMOTE_WRITE | REMOTE_READ; for get-bw filled with a known pattern) and
 * accepts with its endpoints and {@code magic 'RBO2' (4) | region address (8) | rkey (4)}. The
 * server is passive, as the target of one-sided operations is: it only waits for the client's
 * final 8-byte SEND ({@code 'RBOD'} + padding) on rail 0, then exits.
 *
 * <p><b>Verification:</b> after the last size, get-bw compares what it read with the pattern;
 * put-bw reads the written range back with RDMA READ and compares it with its source.
 *
 * <p>Transfer {@code j} of a window goes to offset {@code (j mod slots) x size} of both regions, with
 * {@code slots = min(window, max(1, 64 MiB / largest size))}, so the regions stay at most
 * 64 MiB (or one largest size).
 */
final class OneSidedBench {
    static final int REQUEST_MAGIC = 0x52424f31;
    static final int REPLY_MAGIC = 0x52424f32;
    static final long DONE = 0x52424f4400000000L;
    static final long MAX_REGION_BYTES = 64L << 20;
    private static final long RETRY_TIMEOUT_NS = 200_000_000L;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);
    private static final Duration IN_JVM_TIMEOUT = Duration.ofMinutes(10);

    private OneSidedBench() {
    }

    /** Runs {@code s} in the mode it asks for; returns the exit code (3: verification failed). */
    static int run(BenchCommand.Settings s, PrintWriter out) {
        NetRails.HostPort listen = s.peer().listen();
        NetRails.HostPort connect = s.peer().connect();
        if (listen != null) {
            return serveProcess(s, listen, out);
        }
        if (connect != null) {
            return clientProcess(s, connect, out);
        }
        return inJvm(s, out);
    }

    /** Bytes of the region both ends register for {@code sizes} and {@code window}. */
    static long regionBytes(List<Integer> sizes, int window) {
        int max = sizes.stream().mapToInt(Integer::intValue).max().orElse(1);
        return (long) slots(max, window) * max;
    }

    private static int slots(int maxSize, int window) {
        return (int) Math.min(window, Math.max(1, MAX_REGION_BYTES / maxSize));
    }

    // ------------------------------------------------------------------ modes

    private static int inJvm(BenchCommand.Settings s, PrintWriter out) {
        long deadlineNs = System.nanoTime() + IN_JVM_TIMEOUT.toNanos();
        if (s.addresses() == null) {
            SoftProvider provider = InJvmRails.provider(s.railBytesPerSec(), 0, 64 << 10);
            try (Server server = new Server(provider, provider.device("rx0"), s.rails(), s.test(), new PortAddress("mem", "rx0", 0), refusal -> { });
                 Client client = Client.connect(provider, provider.device("tx0"), s, server.address(), deadlineNs)) {
                BenchCommand.header(out, s, "");
                int code = client.runAll(s, out, deadlineNs);
                server.awaitDone(deadlineNs);
                return code;
            } finally {
                provider.close();
            }
        }
        List<Long> shaping = s.shaped() ? s.railBytesPerSec() : null;
        RdmaProvider serverSide = NetRails.openProvider(s.addresses(), shaping, 64 << 10, "bench-listener");
        try {
            RdmaProvider clientSide = NetRails.openProvider(s.addresses(), shaping, 64 << 10, "bench-connector");
            try (Server server = new Server(serverSide, serverSide.devices().get(0), s.rails(), s.test(), new PortAddress("net", s.addresses().get(0), 0), refusal -> { });
                 Client client = Client.connect(clientSide, clientSide.devices().get(0), s, server.address(), deadlineNs)) {
                BenchCommand.header(out, s, "");
                int code = client.runAll(s, out, deadlineNs);
                server.awaitDone(deadlineNs);
                return code;
            } finally {
                clientSide.close();
            }
        } finally {
            serverSide.close();
        }
    }

    private static int serveProcess(BenchCommand.Settings s, NetRails.HostPort at, PrintWriter out) {
        long deadlineNs = System.nanoTime() + s.peer().timeout().toNanos();
        RdmaProvider provider = NetRails.openProvider(s.addresses(), s.shaped() ? s.railBytesPerSec() : null, 64 << 10, "bench-listener");
        try (Server server = new Server(provider, provider.devices().get(0), s.rails(), s.test(), listenAddress(at), refusal -> {
            out.println("rdmaflux bench " + BenchCommand.name(s.test()) + ": " + refusal + "; still waiting for a peer");
            out.flush();
        })) {
            PortAddress bound = server.address();
            String where = bound.host() + ":" + bound.port();
            String name = BenchCommand.name(s.test());
            out.println("rdmaflux bench " + name + ": listening at " + where + " (rails on " + String.join(",", s.addresses())
                + "); serving one run for a peer (bench " + name + " --connect " + where + "), up to " + s.peer().timeout().toSeconds() + " s");
            out.flush();
            server.awaitDone(deadlineNs);
            out.printf(Locale.ROOT, "rdmaflux bench %s: served a %d-byte region over %d rail(s); the peer is done%n", name, server.regionBytes(),
                s.rails());
            out.flush();
            return 0;
        } finally {
            provider.close();
        }
    }

    private static PortAddress listenAddress(NetRails.HostPort at) {
        return new PortAddress("net", at.host(), at.port());
    }

    private static int clientProcess(BenchCommand.Settings s, NetRails.HostPort to, PrintWriter out) {
        long deadlineNs = System.nanoTime() + s.peer().timeout().toNanos();
        RdmaProvider provider = NetRails.openProvider(s.addresses(), s.shaped() ? s.railBytesPerSec() : null, 64 << 10, "bench-connector");
        try (Client client = Client.connect(provider, provider.devices().get(0), s, listenAddress(to), deadlineNs)) {
            BenchCommand.header(out, s, ", peer " + to);
            return client.runAll(s, out, deadlineNs);
        } finally {
            provider.close();
        }
    }

    // ------------------------------------------------------------------ one end's verbs resources

    /** One end: a protection domain, one CQ and one RC QP per rail (port {@code r + 1}), the region. */
    private static final class End implements AutoCloseable {
        final ProtectionDomain pd;
        final List<CompletionQueue> cqs = new ArrayList<>();
        final List<QueuePair> qps = new ArrayList<>();
        final List<MemoryRegion> regions = new ArrayList<>();

        End(Device device, int rails, int maxSendWr) {
            pd = device.allocateProtectionDomain();
            try {
                for (int r = 0; r < rails; r++) {
                    CompletionQueue cq = device.createCompletionQueue(maxSendWr + 16);
                    cqs.add(cq);
                    // a retry timeout of 200 ms x 7, as reactive-core's QpTimeouts.DEFAULTS: the default 1 ms gives up
                    // on a loaded 2-core machine where a soft NIC thread may not run for a few ms
                    QueuePair qp = pd.createQueuePair(QpInitAttributes.builder(QpType.RC, device.port(r + 1)).cq(cq).maxSendWr(maxSendWr)
                        .maxReceiveWr(4).retryTimeoutNs(RETRY_TIMEOUT_NS).retryCount(7).build());
                    qps.add(qp);
                    qp.init();
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        MemoryRegion allocate(long bytes, int access) {
            MemoryRegion mr = pd.allocateMemory(bytes, access);
            regions.add(mr);
            return mr;
        }

        List<QpEndpoint> endpoints() {
            return qps.stream().map(QueuePair::localEndpoint).toList();
        }

        void connect(List<QpEndpoint> remote) {
            for (int r = 0; r < qps.size(); r++) {
                qps.get(r).connect(remote.get(r));
            }
        }

        @Override
        public void close() {
            for (QueuePair qp : qps) {
                qp.close();
            }
            for (CompletionQueue cq : cqs) {
                cq.close();
            }
            for (MemoryRegion mr : regions) {
                mr.deregister();
            }
            pd.close();
        }
    }

    private static int maxSendWr(Device device, int rails, int window) {
        return Math.min(device.capabilities().maxQpWorkRequests(), window * rails + 16);
    }

    // ------------------------------------------------------------------ server

    /**
     * The passive side: listens, accepts one client (creating its QPs and region then), and waits
     * for the client's DONE. Later requests are refused.
     */
    static final class Server implements AutoCloseable {
        private final Device device;
        private final int rails;
        private final BenchCommand.Test serves;
        private final ConnectionManager.Listener listener;
        private final CompletableFuture<End> accepted = new CompletableFuture<>();
        private volatile long regionBytes;
        private final java.util.function.Consumer<String> onRefused;

        /**
         * @param onRefused told (on a connection manager thread) about each client refused, which does not end the wait
         */
        Server(RdmaProvider provider, Device device, int rails, BenchCommand.Test serves, PortAddress at, java.util.function.Consumer<String> onRefused) {
            this.device = device;
            this.onRefused = onRefused;
            this.rails = rails;
            this.serves = serves;
            try {
                this.listener = provider.connectionManager().listen(at, this::onRequest);
            } catch (RuntimeException e) {
                throw new UserError("cannot listen at " + at.host() + ":" + at.port() + ": " + Main.rootMessage(e), e);
            }
        }

        PortAddress address() {
            return listener.address();
        }

        long regionBytes() {
            return regionBytes;
        }

        private CompletableFuture<CmParams> onRequest(PortAddress from, CmParams request) {
            ByteBuffer pd = ByteBuffer.wrap(request.privateData());
            String refusal = null;
            int test = -1;
            long bytes = -1;
            if (pd.remaining() != 13 || pd.getInt() != REQUEST_MAGIC) {
                refusal = "this is an rdmaflux bench " + BenchCommand.name(serves) + " listener; the request is not a one-sided bench request";
            } else {
                test = pd.get();
                bytes = pd.getLong();
                if (test != serves.ordinal()) {
                    refusal = "it serves " + BenchCommand.name(serves) + "; run the same test on both sides";
                } else if (request.endpoints().size() != rails) {
                    refusal = "it has " + rails + " rail(s) but the client asked for " + request.endpoints().size()
                        + "; give both sides the same number of --addresses";
                } else if (bytes < 1 || bytes > MAX_REGION_BYTES) {
                    refusal = "the client asked for a region of " + bytes + " bytes; at most " + MAX_REGION_BYTES;
                }
            }
            if (accepted.isDone()) {
                return CompletableFuture.failedFuture(new UserError("it serves one run and already has a client"));
            }
            if (refusal != null) {
                // a client it cannot serve does not count as the run: the listener says so and waits for the right one
                // (ending here could close the connection manager before the refusal reached the client)
                onRefused.accept("refused a peer from " + from.host() + ": " + refusal);
                return CompletableFuture.failedFuture(new UserError(refusal));
            }
            End end = null;
            try {
                end = new End(device, rails, 16);
                MemoryRegion region = end.allocate(bytes, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
                if (serves == BenchCommand.Test.get_bw) {
                    Pattern.fill(region.buffer(), bytes);
                }
                MemoryRegion done = end.allocate(8, Access.LOCAL_WRITE);
                end.connect(request.endpoints());
                if (!end.qps.get(0).postReceive(new ReceiveWorkRequest().wrId(1).sge(done, 0, 8))) {
                    throw new IllegalStateException("the receive queue of a fresh QP is full");
                }
                regionBytes = bytes;
                byte[] reply = ByteBuffer.allocate(16).putInt(REPLY_MAGIC).putLong(region.address()).putInt(region.rkey()).array();
                CmParams answer = new CmParams(end.endpoints(), reply);
                if (!accepted.complete(end)) {
                    end.close();
                    return CompletableFuture.failedFuture(new UserError("it serves one run and already has a client"));
                }
                return CompletableFuture.completedFuture(answer);
            } catch (RuntimeException e) {
                if (end != null) {
                    end.close();
                }
                accepted.completeExceptionally(e);
                return CompletableFuture.failedFuture(e);
            }
        }

        /**
         * Waits for a client and its DONE.
         *
         * @throws UserError if none connects, or its DONE does not arrive, before the deadline, or rail 0 fails
         */
        void awaitDone(long deadlineNs) {
            End end;
            try {
                end = accepted.get(Math.max(1, deadlineNs - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new UserError("no peer connected within --timeout-s");
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UserError u) {
                    throw u;
                }
                throw new UserError("accepting the peer failed: " + Main.rootMessage(e.getCause()), e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UserError("interrupted while waiting for a peer");
            }
            WorkCompletion[] got = new WorkCompletion[1];
            IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 1_000_000);
            while (got[0] == null) {
                if (end.cqs.get(0).poll(1, wc -> got[0] = wc.copy()) == 0) {
                    if (System.nanoTime() - deadlineNs > 0) {
                        throw new UserError("the peer did not finish within --timeout-s");
                    }
                    idle.idle();
                }
            }
            if (!got[0].isSuccess()) {
                throw new UserError("rail 0 failed before the peer was done: " + got[0].status() + " " + got[0].detail());
            }
        }

        @Override
        public void close() {
            listener.close();
            accepted.thenAccept(End::close);
            accepted.cancel(false);
        }
    }

    // ------------------------------------------------------------------ client

    /** The measuring side: its QPs connected to the server's, a source/target region, OneSidedRails over them. */
    static final class Client implements AutoCloseable {
        private final End end;
        private final MemoryRegion region;
        private final MemoryRegion check;
        private final RailBuffers buffers;
        private final RailBuffers checkBuffers;
        private final List<RdmaRail> rails = new ArrayList<>();
        private final IdleStrategy idle = new BackoffIdleStrategy(100, 10, 1_000, 100_000);
        private final CommunicationScheduler.CompletedMessageHandler<RdmaTransfer> onCompleted = (t, psn, len) -> { };

        private Client(End end, MemoryRegion region, MemoryRegion check, long remoteAddress, int rkey) {
            this.end = end;
            this.region = region;
            this.check = check;
            int n = end.qps.size();
            this.buffers = RailBuffers.oneDevice(region, remoteAddress, rkey, n);
            this.checkBuffers = RailBuffers.oneDevice(check, remoteAddress, rkey, n);
            for (int r = 0; r < n; r++) {
                rails.add(new RdmaRail(end.qps.get(r), end.cqs.get(r)));
            }
        }

        /**
         * Connects to the server at {@code at}.
         *
         * @throws UserError if it is unreachable, refuses (its reason included) or does not answer in time
         */
        static Client connect(RdmaProvider provider, Device device, BenchCommand.Settings s, PortAddress at, long deadlineNs) {
            long regionBytes = OneSidedBench.regionBytes(s.sizes(), s.window());
            End end = new End(device, s.rails(), maxSendWr(device, s.rails(), s.window()));
            try {
                MemoryRegion region = end.allocate(regionBytes, Access.LOCAL_WRITE);
                MemoryRegion check = end.allocate(regionBytes, Access.LOCAL_WRITE);
                if (s.test() == BenchCommand.Test.put_bw) {
                    Pattern.fill(region.buffer(), regionBytes);
                }
                byte[] request = ByteBuffer.allocate(13).putInt(REQUEST_MAGIC).put((byte) s.test().ordinal()).putLong(regionBytes).array();
                long timeoutNs = Math.min(CONNECT_TIMEOUT.toNanos(), Math.max(1, deadlineNs - System.nanoTime()));
                String where = at.host() + ":" + at.port();
                CmParams reply;
                try {
                    reply = provider.connectionManager().connect(at, new CmParams(end.endpoints(), request), timeoutNs)
                        .get(timeoutNs + TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS);
                } catch (ExecutionException | TimeoutException e) {
                    Throwable c = e instanceof ExecutionException ? e.getCause() : e;
                    throw new UserError("cannot connect to " + where + ": " + (c instanceof TimeoutException ? "no answer" : Main.rootMessage(c))
                        + "; start the peer there first (rdmaflux bench " + BenchCommand.name(s.test()) + " --listen " + where + " --addresses ...)", c);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new UserError("interrupted while connecting to " + where);
                }
                ByteBuffer r = ByteBuffer.wrap(reply.privateData());
                if (r.remaining() != 16 || r.getInt() != REPLY_MAGIC || reply.endpoints().size() != s.rails()) {
                    throw new UserError("the listener at " + where + " answered with something that is not a one-sided bench reply; "
                        + "is it an rdmaflux bench " + BenchCommand.name(s.test()) + " --listen of the same version?");
                }
                long remoteAddress = r.getLong();
                int rkey = r.getInt();
                end.connect(reply.endpoints());
                return new Client(end, region, check, remoteAddress, rkey);
            } catch (RuntimeException e) {
                end.close();
                throw e;
            }
        }

        /** Measures every size, prints the rows, verifies, tells the server it is done. Returns the exit code. */
        int runAll(BenchCommand.Settings s, PrintWriter out, long deadlineNs) {
            RailsSpec spec = RailsSpec.rails(s.rails()).maxInFlightMessages(s.window()).weightHistoryCapacity(0);
            Policies.oneSided(s.policy(), s.rails()).accept(spec);
            OneSidedRails os = new OneSidedRails(spec, rails);
            boolean put = s.test() == BenchCommand.Test.put_bw;
            BenchReport report = BenchReport.of(s, "");
            long extent = 0;
            int maxSize = s.sizes().stream().mapToInt(Integer::intValue).max().orElse(1);
            int slots = slots(maxSize, s.window());
            for (OsuSchedule.Step step : s.schedule().steps(s.sizes(), true)) {
                int size = step.sizeBytes();
                int warmup = step.warmup();
                RdmaTransfer[] window = new RdmaTransfer[s.window()];
                for (int j = 0; j < window.length; j++) {
                    long offset = (long) (j % slots) * size;
                    window[j] = put ? new RdmaPut(buffers, offset, size) : new RdmaGet(buffers, offset, size);
                }
                extent = Math.max(extent, (long) Math.min(slots, window.length) * size);
                long t0 = 0;
                for (int it = 0; it < warmup + step.iterations(); it++) {
                    if (it == warmup) {
                        t0 = System.nanoTime();
                    }
                    for (RdmaTransfer t : window) {
                        issue(os, t, deadlineNs);
                    }
                    drain(os, deadlineNs);
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                double bps = (double) step.iterations() * s.window() * size / seconds;
                if (step.printed()) {
                    BenchCommand.bandwidthRow(out, size, bps);
                    report.bandwidth(step, bps / 1e6);
                }
            }
            report.write();
            String mismatch;
            if (put) {
                issue(os, new RdmaGet(checkBuffers, 0, extent), deadlineNs);
                drain(os, deadlineNs);
                mismatch = Pattern.compare(check.buffer(), extent);
            } else {
                mismatch = Pattern.compare(region.buffer(), extent);
            }
            out.println(mismatch == null
                ? String.format(Locale.ROOT, "# verified: %d bytes %s", extent, put ? "read back from the target equal what was put" : "read equal the target's")
                : "# MISMATCH: " + mismatch);
            out.flush();
            sendDone(deadlineNs);
            return mismatch == null ? 0 : 3;
        }

        private void issue(OneSidedRails os, RdmaTransfer t, long deadlineNs) {
            while (true) {
                long now = System.nanoTime();
                long psn = t instanceof RdmaPut p ? os.put(p, now) : os.get((RdmaGet) t, now);
                if (psn >= 0) {
                    return;
                }
                if (psn == CommunicationScheduler.NO_RAIL) {
                    throw new UserError("every rail failed (the peer went away, or refused the rkey)");
                }
                progress(os, deadlineNs);
            }
        }

        private void drain(OneSidedRails os, long deadlineNs) {
            while (os.inFlight() > 0) {
                progress(os, deadlineNs);
            }
        }

        private void progress(OneSidedRails os, long deadlineNs) {
            long now = System.nanoTime();
            int work = os.poll(now);
            work += os.pollCompleted(onCompleted);
            if (work > 0) {
                idle.reset();
                return;
            }
            if (now - deadlineNs > 0) {
                throw new UserError("the transfers did not finish within --timeout-s");
            }
            boolean allFailed = true;
            for (RdmaRail r : rails) {
                allFailed &= r.failed();
            }
            if (allFailed) {
                throw new UserError("every rail failed (the peer went away, or refused the rkey)");
            }
            idle.idle();
        }

        private void sendDone(long deadlineNs) {
            MemoryRegion done = end.allocate(8, Access.LOCAL_WRITE);
            done.buffer().putLong(0, DONE);
            SendWorkRequest wr = new SendWorkRequest().wrId(Long.MAX_VALUE).opcode(WrOpcode.SEND).signaled(true).sge(done, 0, 8);
            if (!end.qps.get(0).postSend(wr)) {
                throw new UserError("rail 0's send queue is full after the run");
            }
            WorkCompletion[] got = new WorkCompletion[1];
            while (got[0] == null) {
                if (end.cqs.get(0).poll(1, wc -> got[0] = wc.copy()) == 0) {
                    if (System.nanoTime() - deadlineNs > 0) {
                        throw new UserError("telling the peer the run is done did not finish within --timeout-s");
                    }
                    idle.idle();
                }
            }
            if (!got[0].isSuccess()) {
                throw new UserError("telling the peer the run is done failed: " + got[0].status() + " " + got[0].detail());
            }
        }

        @Override
        public void close() {
            end.close();
        }
    }

    /**
     * The bytes both ends agree on: byte {@code i} is byte {@code i & 7} (little-endian) of the
     * 64-bit word {@code (i >>> 3) * 0x9E3779B97F4A7C15}, a pattern in which every 8-byte word
     * differs, so a transfer to the wrong offset shows.
     */
    static final class Pattern {
        private static final long GOLDEN = 0x9E3779B97F4A7C15L;

        private Pattern() {
        }

        static void fill(ByteBuffer b, long bytes) {
            ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            int words = (int) (bytes >>> 3);
            for (int w = 0; w < words; w++) {
                le.putLong(w << 3, w * GOLDEN);
            }
            for (long i = (long) words << 3; i < bytes; i++) {
                le.put((int) i, expected(i));
            }
        }

        static byte expected(long i) {
            return (byte) (((i >>> 3) * GOLDEN) >>> ((i & 7) * 8));
        }

        /** @return null if {@code [0, bytes)} of {@code b} is the pattern, else where it differs */
        static @Nullable String compare(ByteBuffer b, long bytes) {
            ByteBuffer le = b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            int words = (int) (bytes >>> 3);
            for (int w = 0; w < words; w++) {
                if (le.getLong(w << 3) != w * GOLDEN) {
                    return firstDifference(le, (long) w << 3, Math.min(bytes, ((long) w << 3) + 8));
                }
            }
            return firstDifference(le, (long) words << 3, bytes);
        }

        private static @Nullable String firstDifference(ByteBuffer le, long from, long to) {
            for (long i = from; i < to; i++) {
                if (le.get((int) i) != expected(i)) {
                    return String.format(Locale.ROOT, "byte %d is 0x%02x but 0x%02x was expected", i, le.get((int) i), expected(i));
                }
            }
            return null;
        }
    }
}
