package io.rdmaflux.ud;

import io.rdmaflux.core.tck.PairOptions;

/**
 * The fault matrix (issue 20) of {@link FaultMatrixUdMemTest} (reliable UD, in-JVM fabric, INVOKER nodes in
 * virtual time, the UD fault model for the wire-fault rows, corruption caught by DR's CRC32C), with every UD
 * channel taking its buffers from the nodes' shared pools (48 receive buffers per rail).
 */
class FaultMatrixUdMemSrqTest extends FaultMatrixUdMemTest {
    @Override
    protected String kind() {
        return "reliable UD over the node's shared pools";
    }

    @Override
    protected PairOptions options(int rails) {
        return super.options(rails).node(b -> b.sharedReceiveQueue(48).sharedSendBuffers(96));
    }
}
