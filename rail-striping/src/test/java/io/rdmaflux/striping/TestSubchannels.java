package io.rdmaflux.striping;

import io.rdmaflux.core.channel.Subchannel;

import java.lang.reflect.Proxy;

/** Subchannel views for scheduler tests that drive a scheduler's SPI calls by hand. */
public final class TestSubchannels {
    private TestSubchannels() {
    }

    /**
     * A subchannel of {@code rail} that can always send (16 send credits and buffers); any method the
     * SPI adds answers a neutral value (0, false or null).
     */
    public static Subchannel subchannel(int rail) {
        return (Subchannel) Proxy.newProxyInstance(Subchannel.class.getClassLoader(), new Class<?>[] {Subchannel.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "rail" -> rail;
                case "canSend", "isUsable" -> true;
                case "sendCredits" -> 16L;
                case "freeSendBuffers", "maxFramePayloadBytes" -> 16;
                case "identity" -> proxy;
                case "toString" -> "subchannel " + rail;
                case "hashCode" -> rail;
                case "equals" -> proxy == args[0];
                default -> method.getReturnType() == long.class ? 0L : method.getReturnType() == int.class ? 0 : null;
            });
    }
}
