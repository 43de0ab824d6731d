package io.rdmaflux.verbs.ucx;

import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;
import io.rdmaflux.verbs.ThreadingMode;

/**
 * reactive-core's Connection TCK over the ucx provider with {@code cm=tcp} over UCX {@code tcp}: two
 * DEDICATED nodes driving two INVOKER ucx providers that share no directory and no UCX context; the
 * server listens at {@code ucx://127.0.0.1:0} (the TCP connection manager), and every queue pair's
 * peer address is resolved from that exchange, as between two processes. Skipped where UCX cannot run.
 */
class UcxRemoteConnectionTckTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        UcxTestSupport.assumeUcx();
        UcxProvider a = provider(options, "a");
        UcxProvider b;
        try {
            b = provider(options, "b");
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        return RealTimePair.over(options, a.nics(), b.nics(), UcxFrameTransport.FABRIC, "127.0.0.1", () -> {
            a.close();
            b.close();
        });
    }

    private static UcxProvider provider(PairOptions options, String side) {
        return UcxProvider.builder().name("ucx-remote-" + side).tls("tcp").cm(UcxProvider.Cm.TCP).threadingMode(ThreadingMode.INVOKER)
            .nics(x -> x.portsPerDevice(options.rails())).build();
    }
}
