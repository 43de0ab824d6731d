package io.rdmaflux.verbs.ucx;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.UcxUtils;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

/**
 * The ceiling a {@code ucp_put} WRITE path could reach: OSU {@code put_bw} on raw JUCX (side B
 * registers 1 MiB with {@code registerMemory} and packs its rkey, side A unpacks it on its endpoint and
 * puts a window of 64 messages, then flushes the endpoint, {@code iterations} times), one thread
 * progressing both workers (over {@code tcp} UCX emulates a put with active messages the target worker
 * must progress). Prints MB/s per size. Not a test: a probe for the README's put-bw table, to set
 * beside {@code bench put-bw --provider ucx} (the provider's WRITE as soft NIC frames) in one run.
 *
 * <pre>
 * mvn -B -q -pl verbs-ucx -am test-compile
 * UCX_LOG_LEVEL=error java -cp verbs-ucx/target/test-classes:$HOME/.m2/repository/org/openucx/jucx/1.18.1/jucx-1.18.1.jar \
 *     io.rdmaflux.verbs.ucx.UcxPutBandwidthProbe tcp
 * </pre>
 */
public final class UcxPutBandwidthProbe {
    private static final UcpRequestParams HOST = new UcpRequestParams().setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
    private static final int WINDOW = 64;
    private static final int[] SIZES = {4096, 65536, 1 << 20};

    private UcxPutBandwidthProbe() {
    }

    public static void main(String[] args) throws Exception {
        String tls = args.length > 0 ? args[0] : "tcp";
        System.out.printf(Locale.ROOT, "# raw JUCX put_bw, tls %s, window %d, load %.2f%n", tls, WINDOW,
            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        UcpParams params = new UcpParams().requestRmaFeature().requestAmFeature().setConfig("TLS", tls).setConfig("KEEPALIVE_INTERVAL", "inf");
        try (UcpContext ca = new UcpContext(params); UcpContext cb = new UcpContext(params);
             UcpWorker wa = ca.newWorker(new UcpWorkerParams()); UcpWorker wb = cb.newWorker(new UcpWorkerParams())) {
            ByteBuffer src = ByteBuffer.allocateDirect(1 << 20);
            ByteBuffer dst = ByteBuffer.allocateDirect(1 << 20);
            for (int i = 0; i < src.capacity(); i++) {
                src.put(i, (byte) (i * 31));
            }
            UcpMemory srcMem = ca.registerMemory(src);
            UcpMemory dstMem = cb.registerMemory(dst);
            UcpEndpoint ab = wa.newEndpoint(new UcpEndpointParams().setUcpAddress(wb.getAddress()));
            UcpRemoteKey rkey = ab.unpackRemoteKey(dstMem.getRemoteKeyBuffer());
            for (int size : SIZES) {
                int iterations = size >= 1 << 20 ? 20 : size >= 65536 ? 100 : 500;
                run(wa, wb, ab, rkey, srcMem, dstMem, size, 5); // warm-up
                long ns = run(wa, wb, ab, rkey, srcMem, dstMem, size, iterations);
                double mbPerSec = (double) size * WINDOW * iterations / (ns / 1e9) / 1e6;
                System.out.printf(Locale.ROOT, "%-8d %10.2f MB/s%n", size, mbPerSec);
            }
            for (int i = 0; i < 1 << 20; i += 4099) {
                if (dst.get(i) != src.get(i)) {
                    throw new AssertionError("byte " + i + " differs after the puts");
                }
            }
            rkey.close();
            srcMem.deregister();
            dstMem.deregister();
        }
    }

    private static long run(UcpWorker wa, UcpWorker wb, UcpEndpoint ab, UcpRemoteKey rkey, UcpMemory src, UcpMemory dst, int size,
                            int iterations) throws Exception {
        long t0 = System.nanoTime();
        for (int it = 0; it < iterations; it++) {
            for (int w = 0; w < WINDOW; w++) {
                long off = (long) (w * size) % (1 << 20);
                if (off + size > 1 << 20) {
                    off = 0;
                }
                ab.putNonBlocking(src.getAddress() + off, size, dst.getAddress() + off, rkey, null, HOST);
            }
            boolean[] flushed = new boolean[1];
            UcpRequest flush = ab.flushNonBlocking(new UcxCallback() {
                @Override
                public void onSuccess(UcpRequest request) {
                    flushed[0] = true;
                }
            });
            while (!flushed[0] && (flush == null || !flush.isCompleted())) {
                wa.progress();
                wb.progress();
            }
        }
        return System.nanoTime() - t0;
    }
}
