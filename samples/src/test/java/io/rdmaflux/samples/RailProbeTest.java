package io.rdmaflux.samples;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.core.channel.SubchannelScheduler;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RailProbe} observes a policy without changing it: every hook of {@link SubchannelScheduler},
 * defaults included, is forwarded to the wrapped scheduler (a default it did not override would
 * silently replace the policy's own answer, as a missing {@code stripeNow} once disabled the commit
 * horizon of the sample's connections).
 */
class RailProbeTest {

    @Test
    void theProbeOverridesEveryHookOfTheSchedulerInterface() throws Exception {
        SubchannelScheduler probe = new RailProbe(subchannels -> (psn, length, s) -> 0).create(List.of());
        List<String> missing = new ArrayList<>();
        for (Method m : SubchannelScheduler.class.getMethods()) {
            if (Modifier.isStatic(m.getModifiers())) {
                continue;
            }
            Method impl = probe.getClass().getMethod(m.getName(), m.getParameterTypes());
            if (impl.getDeclaringClass() == SubchannelScheduler.class) {
                missing.add(m.getName());
            }
        }
        assertEquals(List.of(), missing, "hooks answered by the interface's default instead of the wrapped policy");
    }

    @Test
    void stripeNowIsTheWrappedPoliciesAnswer() {
        boolean[] answer = {false};
        SubchannelScheduler inner = new SubchannelScheduler() {
            @Override
            public int select(int psn, int lengthBytes, Subchannel[] subchannels) {
                return 0;
            }

            @Override
            public boolean stripeNow(long nowNs) {
                return answer[0];
            }
        };
        SubchannelScheduler probe = new RailProbe(subchannels -> inner).create(List.of());
        assertFalse(probe.stripeNow(0));
        answer[0] = true;
        assertTrue(probe.stripeNow(0));
    }
}
