package io.rdmaflux.verbs.soft;

import io.rdmaflux.verbs.tck.RailModelTck;
import io.rdmaflux.verbs.tck.TckFixture;

/** The rail-model TCK on the soft provider's in-JVM fabric. */
class SoftMemRailModelTckTest extends RailModelTck {
    @Override
    protected TckFixture createFixture(int portsPerDevice, RailConfig rail) {
        return new SoftMemFixture(portsPerDevice, rail);
    }
}
