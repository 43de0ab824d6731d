package io.rdmaflux.core.tck;

import io.rdmaflux.core.RendezvousMode;

/** The Connection TCK on the IP fabric over 127.0.0.1 (RC over TCP), real time, with the READ rendezvous. */
class ConnectionTckNetLoopbackReadTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.net(options.spec(s -> s.rendezvous(RendezvousMode.READ)));
    }
}
