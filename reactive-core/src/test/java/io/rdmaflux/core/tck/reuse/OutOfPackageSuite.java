package io.rdmaflux.core.tck.reuse;

import io.rdmaflux.core.tck.ConnectionTck;
import io.rdmaflux.core.tck.ConnectionTckFixture;
import io.rdmaflux.core.tck.PairOptions;
import io.rdmaflux.core.tck.VirtualTimeMemPair;

/**
 * The Connection TCK subclassed from outside its package, as a channel kind in another module does
 * through the test-jar. Not run by surefire (no test-class name): {@link ConnectionTckReuseTest} discovers
 * it and runs a test of it.
 */
public class OutOfPackageSuite extends ConnectionTck {
    @Override
    protected ConnectionTckFixture openPair(PairOptions options) {
        return new VirtualTimeMemPair(options);
    }

    @Override
    protected boolean supportsRailFaults() {
        return true;
    }
}
