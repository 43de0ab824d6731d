package io.rdmaflux.verbs.ucx;

import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.RealTimePair;
import io.rdmaflux.verbs.ThreadingMode;

/**
 * reactive-core's Connection TCK over the ucx provider: two DEDICATED nodes driving two INVOKER ucx
 * providers (one device, one port per rail, each device its own UCP worker) over UCX shared memory,
 * in real time. Skipped where UCX cannot run.
 */
class UcxConnectionTckTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        UcxTestSupport.assumeUcx();
        UcxProvider a = UcxProvider.builder().tls("sm,self").threadingMode(ThreadingMode.INVOKER)
            .nics(b -> b.portsPerDevice(options.rails())).build();
        UcxProvider b;
        try {
            b = UcxProvider.builder().tls("sm,self").threadingMode(ThreadingMode.INVOKER)
                .nics(x -> x.portsPerDevice(options.rails())).build();
        } catch (RuntimeException e) {
            a.close();
            throw e;
        }
        return RealTimePair.over(options, a.nics(), b.nics(), UcxFrameTransport.FABRIC, b.devices().get(0).name(), () -> {
            a.close();
            b.close();
        });
    }
}
