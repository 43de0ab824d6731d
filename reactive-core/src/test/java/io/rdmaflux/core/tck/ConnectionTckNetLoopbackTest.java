package io.rdmaflux.core.tck;

/** The Connection TCK on the IP fabric over 127.0.0.1 (RC over TCP), DEDICATED nodes, real time; no port failure. */
class ConnectionTckNetLoopbackTest extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return RealTimePair.net(options);
    }
}
