package io.rdmaflux.benchmarks.ucx;

import io.rdmaflux.verbs.Access;
import io.rdmaflux.verbs.CompletionQueue;
import io.rdmaflux.verbs.CompletionSink;
import io.rdmaflux.verbs.Device;
import io.rdmaflux.verbs.MemoryRegion;
import io.rdmaflux.verbs.QpInitAttributes;
import io.rdmaflux.verbs.QpType;
import io.rdmaflux.verbs.QueuePair;
import io.rdmaflux.verbs.RdmaProvider;
import io.rdmaflux.verbs.ReceiveWorkRequest;
import io.rdmaflux.verbs.SendWorkRequest;
import io.rdmaflux.verbs.ThreadingMode;
import io.rdmaflux.verbs.WcOpcode;
import io.rdmaflux.verbs.soft.SoftFabric;
import io.rdmaflux.verbs.soft.SoftProvider;
import io.rdmaflux.verbs.ucx.UcxProvider;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import io.rdmaflux.benchmarks.RoundTripSide;
import org.HdrHistogram.Histogram;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * 64-byte round trip in one JVM and one thread, which drives both hosts (no thread hand-off, so a
 * loaded host's scheduler stays out of it): an RC SEND ping answered by a SEND pong, through the
 * verbs SPI on the {@code ucx} provider over {@code sm,self} and over {@code tcp}, and on the soft
 * provider's in-JVM fabric; and raw JUCX active-message ping-pongs over the same two UCX transports,
 * the floor the ucx provider adds its soft NIC to. Sides are interleaved round by round (each set up,
 * warmed, measured, torn down in turn), so all see the same machine conditions; prints each side's
 * p50/p90/p99 (µs) over all rounds and its p50 relative to raw UCX over the same transport.
 *
 * <pre>
 * java $(cat .mvn/jvm-flags) -cp benchmarks/target/benchmarks.jar io.rdmaflux.benchmarks.ucx.UcxPingPongRatio [rounds] [measure-ms]
 * </pre>
 */
public final class UcxPingPongRatio {
    static final int SIZE = 64;

    private UcxPingPongRatio() {
    }

    /** One side: open, one round trip, close. */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long measureNs = (args.length > 1 ? Long.parseLong(args[1]) : 1_000) * 1_000_000L;
        Map<String, RoundTripSide> sides = new LinkedHashMap<>();
        sides.put("raw UCX AM, sm,self", new RawUcx("sm,self"));
        sides.put("raw UCX AM, tcp", new RawUcx("tcp"));
        sides.put("verbs SEND, ucx sm,self", new VerbsSide(() -> UcxProvider.builder().tls("sm,self").threadingMode(ThreadingMode.INVOKER).build()));
        sides.put("verbs SEND, ucx tcp", new VerbsSide(() -> UcxProvider.builder().tls("tcp").threadingMode(ThreadingMode.INVOKER).build()));
        SoftFabric mem = SoftFabric.mem("pingpong");
        sides.put("verbs SEND, soft mem", new VerbsSide(() -> SoftProvider.builder().fabric(mem).threadingMode(ThreadingMode.INVOKER).build()));
        Map<String, Histogram> all = new LinkedHashMap<>();
        for (var e : sides.entrySet()) {
            RoundTripSide.record(e.getValue(), new Histogram(3), measureNs);
            all.put(e.getKey(), new Histogram(3));
        }
        for (int r = 0; r < rounds; r++) {
            for (var e : sides.entrySet()) {
                RoundTripSide.record(e.getValue(), all.get(e.getKey()), measureNs);
            }
        }
        PrintStream out = System.out;
        out.printf(Locale.ROOT, "# 64 B round trip, one thread drives both hosts, %d interleaved rounds of %d ms per side%n", rounds, measureNs / 1_000_000);
        out.println("# side                          p50 (us)  p90 (us)  p99 (us)  p50 / raw UCX same transport");
        for (var e : all.entrySet()) {
            Histogram h = e.getValue();
            String raw = e.getKey().contains("sm,self") ? "raw UCX AM, sm,self" : e.getKey().contains("tcp") ? "raw UCX AM, tcp" : null;
            String ratio = raw == null ? "" : String.format(Locale.ROOT, "%.2f", (double) h.getValueAtPercentile(50) / all.get(raw).getValueAtPercentile(50));
            out.printf(Locale.ROOT, "%-30s  %8.2f  %8.2f  %8.2f  %s%n", e.getKey(), h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(90) / 1e3,
                h.getValueAtPercentile(99) / 1e3, ratio);
        }
    }

    /** Ping-pong through the verbs SPI between two INVOKER providers of one kind. */
    static final class VerbsSide implements RoundTripSide {
        private final java.util.function.Supplier<RdmaProvider> open;
        private RdmaProvider pa;
        private RdmaProvider pb;
        private CompletionQueue ca;
        private CompletionQueue cb;
        private QueuePair qa;
        private QueuePair qb;
        private SendWorkRequest ping;
        private SendWorkRequest pong;
        private final ReceiveWorkRequest recvA = new ReceiveWorkRequest();
        private final ReceiveWorkRequest recvB = new ReceiveWorkRequest();
        private boolean gotPing;
        private boolean gotPong;
        private final CompletionSink onA = wc -> gotPong |= wc.opcode() == WcOpcode.RECV;
        private final CompletionSink onB = wc -> gotPing |= wc.opcode() == WcOpcode.RECV;

        VerbsSide(java.util.function.Supplier<RdmaProvider> open) {
            this.open = open;
        }

        @Override
        public void open() {
            pa = open.get();
            pb = open.get();
            Device da = pa.devices().get(0);
            Device db = pb.devices().get(0);
            ca = da.createCompletionQueue(1024);
            cb = db.createCompletionQueue(1024);
            var pda = da.allocateProtectionDomain();
            var pdb = db.allocateProtectionDomain();
            qa = pda.createQueuePair(QpInitAttributes.builder(QpType.RC, da.port(1)).cq(ca).build());
            qb = pdb.createQueuePair(QpInitAttributes.builder(QpType.RC, db.port(1)).cq(cb).build());
            qa.connect(qb.localEndpoint());
            qb.connect(qa.localEndpoint());
            MemoryRegion ma = pda.allocateMemory(2 * SIZE, Access.LOCAL_WRITE);
            MemoryRegion mb = pdb.allocateMemory(2 * SIZE, Access.LOCAL_WRITE);
            ping = new SendWorkRequest().wrId(1).sge(ma, 0, SIZE).signaled(false);
            pong = new SendWorkRequest().wrId(2).sge(mb, 0, SIZE).signaled(false);
            recvA.wrId(3).sge(ma, SIZE, SIZE);
            recvB.wrId(4).sge(mb, SIZE, SIZE);
            for (int i = 0; i < 64; i++) {
                qa.postReceive(recvA);
                qb.postReceive(recvB);
            }
        }

        @Override
        public void roundTrip() {
            gotPing = false;
            gotPong = false;
            qa.postSend(ping);
            while (!gotPing) {
                progress();
                cb.poll(16, onB);
            }
            qb.postReceive(recvB);
            qb.postSend(pong);
            while (!gotPong) {
                progress();
                ca.poll(16, onA);
            }
            qa.postReceive(recvA);
        }

        private void progress() {
            long now = System.nanoTime();
            pa.progress(now);
            pb.progress(now);
        }

        @Override
        public void close() {
            pa.close();
            pb.close();
        }
    }

    /** Raw JUCX: one context and worker per host, a 64 B active message each way. */
    static final class RawUcx implements RoundTripSide {
        private final String tls;
        private UcpContext c1;
        private UcpContext c2;
        private UcpWorker w1;
        private UcpWorker w2;
        private UcpEndpoint e12;
        private UcpEndpoint e21;
        private final ByteBuffer buf = ByteBuffer.allocateDirect(SIZE);
        private final UcpRequestParams host = new UcpRequestParams().setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
        private long received1;
        private long received2;

        RawUcx(String tls) {
            this.tls = tls;
        }

        @Override
        public void open() {
            c1 = new UcpContext(new UcpParams().requestAmFeature().setConfig("TLS", tls));
            c2 = new UcpContext(new UcpParams().requestAmFeature().setConfig("TLS", tls));
            w1 = c1.newWorker(new UcpWorkerParams());
            w2 = c2.newWorker(new UcpWorkerParams());
            w1.setAmRecvHandler(1, (h, hs, data, ep) -> {
                received1++;
                return UcsConstants.STATUS.UCS_OK;
            }, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            w2.setAmRecvHandler(1, (h, hs, data, ep) -> {
                received2++;
                return UcsConstants.STATUS.UCS_OK;
            }, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            e12 = w1.newEndpoint(new UcpEndpointParams().setUcpAddress(w2.getAddress()));
            e21 = w2.newEndpoint(new UcpEndpointParams().setUcpAddress(w1.getAddress()));
        }

        @Override
        public void roundTrip() {
            long r2 = received2;
            e12.sendAmNonBlocking(1, 0, 0, UcxUtils.getAddress(buf), SIZE, 0, null, host);
            while (received2 == r2) {
                progress();
            }
            long r1 = received1;
            e21.sendAmNonBlocking(1, 0, 0, UcxUtils.getAddress(buf), SIZE, 0, null, host);
            while (received1 == r1) {
                progress();
            }
        }

        private void progress() {
            try {
                w1.progress();
                w2.progress();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() {
            w1.close();
            w2.close();
            c1.close();
            c2.close();
        }
    }
}
