package io.rdmaflux.verbs.ucx;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.openucx.jucx.UcxException;
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
 * How an idle UCP worker's thread should wait: the DEDICATED engine's 10 µs park
 * ({@link UcxProvider#MAX_IDLE_PARK_NS}) against UCX's event-fd wait ({@code arm()} then
 * {@code waitForEvents()}, ended by an arriving message or {@code signal()}), on raw JUCX, A vs B in
 * one run. Side B's thread answers each 8-byte active message from side A (A spins); every tenth
 * round A pauses 200 µs so B goes idle. Prints per mode and round the round trip (p50/p90/p99, µs)
 * and B's thread CPU time over 500 ms of idleness (ms). Not a test: a probe for the README's figures.
 *
 * <pre>
 * mvn -B -q -pl verbs-ucx -am test-compile
 * UCX_LOG_LEVEL=error java -cp verbs-ucx/target/test-classes:$HOME/.m2/repository/org/openucx/jucx/1.18.1/jucx-1.18.1.jar \
 *     io.rdmaflux.verbs.ucx.UcxEventWaitProbe tcp 3
 * </pre>
 */
public final class UcxEventWaitProbe {
    private static final UcpRequestParams HOST = new UcpRequestParams().setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
    private static final int ROUND_TRIPS = 2000;

    private UcxEventWaitProbe() {
    }

    public static void main(String[] args) throws Exception {
        String tls = args.length > 0 ? args[0] : "tcp";
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        System.out.println("# tls " + tls + ", " + ROUND_TRIPS + " round trips of 8 B per run, B idle every 10th; load " + load());
        System.out.println("# mode             p50 (us)  p90 (us)  p99 (us)  B CPU idle 500 ms (ms)");
        for (int r = 0; r < rounds; r++) {
            for (boolean event : new boolean[] {false, true}) {
                System.out.println(run(tls, event));
            }
        }
        System.out.println("# load after " + load());
    }

    private static String load() {
        return String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    private static String run(String tls, boolean eventWait) throws Exception {
        UcpParams params = new UcpParams().requestAmFeature().requestWakeupFeature().setConfig("TLS", tls).setConfig("KEEPALIVE_INTERVAL", "inf");
        try (UcpContext ca = new UcpContext(params); UcpContext cb = new UcpContext(params);
             UcpWorker wa = ca.newWorker(new UcpWorkerParams()); UcpWorker wb = cb.newWorker(new UcpWorkerParams().requestWakeupRX())) {
            ByteBuffer header = ByteBuffer.allocateDirect(8);
            AtomicLong pings = new AtomicLong();
            AtomicLong pongs = new AtomicLong();
            wb.setAmRecvHandler(1, (h, hs, d, ep) -> {
                pings.incrementAndGet();
                return UcsConstants.STATUS.UCS_OK;
            }, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            wa.setAmRecvHandler(2, (h, hs, d, ep) -> {
                pongs.incrementAndGet();
                return UcsConstants.STATUS.UCS_OK;
            }, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            UcpEndpoint aToB = wa.newEndpoint(new UcpEndpointParams().setUcpAddress(wb.getAddress()));
            ByteBuffer aAddress = wa.getAddress();
            boolean[] stop = new boolean[1];
            Thread b = new Thread(() -> serve(wb, aAddress, header, pings, eventWait, stop), "ucx-probe-b");
            b.setDaemon(true);
            b.start();
            long[] rtt = new long[ROUND_TRIPS];
            for (int i = 0; i < ROUND_TRIPS; i++) {
                long t0 = System.nanoTime();
                aToB.sendAmNonBlocking(1, UcxUtils.getAddress(header), 8, 0, 0, UcpConstants.UCP_AM_SEND_FLAG_EAGER, null, HOST);
                while (pongs.get() <= i) {
                    wa.progress();
                }
                rtt[i] = System.nanoTime() - t0;
                if (i % 10 == 0) {
                    long until = System.nanoTime() + 200_000;
                    while (System.nanoTime() - until < 0) {
                        wa.progress();
                    }
                }
            }
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long cpu0 = mx.getThreadCpuTime(b.getId());
            long idleUntil = System.nanoTime() + 500_000_000L;
            while (System.nanoTime() - idleUntil < 0) {
                wa.progress();
                Thread.sleep(1);
            }
            long idleCpu = mx.getThreadCpuTime(b.getId()) - cpu0;
            synchronized (stop) {
                stop[0] = true;
            }
            wb.signal();
            b.join(10_000);
            wa.progress();
            Arrays.sort(rtt);
            return String.format(Locale.ROOT, "%-16s %9.1f %9.1f %9.1f %12.1f", eventWait ? "event-fd wait" : "10 us park",
                rtt[ROUND_TRIPS / 2] / 1e3, rtt[ROUND_TRIPS * 9 / 10] / 1e3, rtt[ROUND_TRIPS * 99 / 100] / 1e3, idleCpu / 1e6);
        }
    }

    private static void serve(UcpWorker wb, ByteBuffer aAddress, ByteBuffer header, AtomicLong pings, boolean eventWait, boolean[] stop) {
        UcpEndpoint toA = wb.newEndpoint(new UcpEndpointParams().setUcpAddress(aAddress));
        long answered = 0;
        while (true) {
            synchronized (stop) {
                if (stop[0]) {
                    return;
                }
            }
            int n;
            try {
                n = wb.progress();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            while (answered < pings.get()) {
                toA.sendAmNonBlocking(2, UcxUtils.getAddress(header), 8, 0, 0, UcpConstants.UCP_AM_SEND_FLAG_EAGER, null, HOST);
                answered++;
            }
            if (n == 0 && answered == pings.get()) {
                if (eventWait) {
                    try {
                        wb.arm(); // throws when events are pending (UCS_ERR_BUSY): progress again instead
                    } catch (UcxException busy) {
                        continue;
                    }
                    wb.waitForEvents();
                } else {
                    LockSupport.parkNanos(UcxProvider.MAX_IDLE_PARK_NS);
                }
            }
        }
    }
}
