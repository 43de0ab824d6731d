package io.rdmaflux.striping;

import io.rdmaflux.core.channel.Subchannel;
import io.rdmaflux.verbs.Port;

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
        return subchannel(rail, Long.MAX_VALUE);
    }

    /**
     * As {@link #subchannel(int)}, on a port that advertises {@code bytesPerSec} ({@link Long#MAX_VALUE}:
     * none, an unshaped rail).
     */
    public static Subchannel subchannel(int rail, long bytesPerSec) {
        Port port = (Port) Proxy.newProxyInstance(Port.class.getClassLoader(), new Class<?>[] {Port.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "bandwidthBytesPerSec" -> bytesPerSec;
                case "number" -> rail + 1;
                case "toString" -> "port of rail " + rail;
                case "hashCode" -> rail;
                case "equals" -> proxy == args[0];
                default -> method.getReturnType() == long.class ? 0L : method.getReturnType() == int.class ? 0 : null;
            });
        return (Subchannel) Proxy.newProxyInstance(Subchannel.class.getClassLoader(), new Class<?>[] {Subchannel.class},
            (proxy, method, args) -> switch (method.getName()) {
                case "rail" -> rail;
                case "canSend", "isUsable" -> true;
                case "sendCredits" -> 16L;
                case "freeSendBuffers", "maxFramePayloadBytes" -> 16;
                case "identity" -> proxy;
                case "port" -> port;
                case "toString" -> "subchannel " + rail;
                case "hashCode" -> rail;
                case "equals" -> proxy == args[0];
                default -> method.getReturnType() == long.class ? 0L : method.getReturnType() == int.class ? 0 : null;
            });
    }
}
