package io.rdmaflux.core.channel;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link ForwardingChannel} and {@link RelayingChannelEvents} cover the whole SPI: every method of
 * {@link Channel} (and {@link Subchannel}) and of {@link ChannelEvents}, defaults included, is declared by
 * them, so a method the SPI gains later cannot silently take its default in a decorator (one-sided work
 * on eager rails was lost that way once).
 */
class ForwardingChannelTest {
    private static List<String> missing(Class<?> spi, Class<?> impl, Set<String> own) {
        List<String> missing = new ArrayList<>();
        List<Class<?>> types = new ArrayList<>(List.of(spi));
        types.addAll(Arrays.asList(spi.getInterfaces()));
        for (Class<?> t : types) {
            for (Method m : t.getDeclaredMethods()) {
                if (Modifier.isStatic(m.getModifiers()) || m.isSynthetic() || own.contains(m.getName())) {
                    continue;
                }
                try {
                    impl.getDeclaredMethod(m.getName(), m.getParameterTypes());
                } catch (NoSuchMethodException e) {
                    missing.add(t.getSimpleName() + "." + m.getName() + Arrays.toString(m.getParameterTypes()));
                }
            }
        }
        return missing;
    }

    @Test
    void forwardingChannelDeclaresEveryChannelMethodButKindCapabilitiesAndEvents() {
        assertEquals(List.of(), missing(Channel.class, ForwardingChannel.class, Set.of("kind", "capabilities", "events")));
    }

    @Test
    void relayingChannelEventsDeclaresEveryEvent() {
        assertEquals(List.of(), missing(ChannelEvents.class, RelayingChannelEvents.class, Set.of()));
    }
}
