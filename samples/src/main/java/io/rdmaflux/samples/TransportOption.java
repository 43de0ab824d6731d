package io.rdmaflux.samples;

import io.rdmaflux.core.ConnectionSpec;
import io.rdmaflux.core.channel.ChannelKind;
import org.jspecify.annotations.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code --transport} option of {@code bench} (two-sided tests) and {@code pipeline}, with {@code --eager}:
 * which {@link ChannelKind} carries each rail of the connection.
 *
 * <ul>
 * <li>{@code rc} = {@link ChannelKind#RC_SEND_RECV}, {@code eager} = {@link ChannelKind#EAGER_RDMA},
 *     {@code ud} = {@link ChannelKind#RELIABLE_UD} (module {@code ud-reliable}, seed 003 &sect;4),
 *     {@code rc-dr} = {@link ChannelKind#RC_DR} (RC with DR's end-to-end CRC32C and acknowledgement, &sect;3.1). One value sets
 *     every rail; a comma list sets one kind per rail ({@code --transport eager,ud}). Given kinds are insisted on
 *     ({@link ConnectionSpec#channelKind(ChannelKind)}): a peer that does not offer one refuses the connection.</li>
 * <li>Without {@code --transport} nothing changes: {@code --eager on} (the default) asks for eager RDMA and falls
 *     back to RC send/receive where the peer does not offer it; {@code --eager off} runs RC send/receive.</li>
 * <li>With both: {@code --eager} must agree with the list. {@code --eager on} needs an {@code eager} rail and
 *     {@code --eager off} allows none; anything else is refused naming both values. The nodes' eager ring is on
 *     exactly when some rail is {@code eager}.</li>
 * </ul>
 */
final class TransportOption {
    /** What the two options chose: the kinds per rail (null: the node's default) and whether the eager ring is on. */
    record Choice(@Nullable List<ChannelKind> kinds, boolean eager) {
        /** {@code spec} with these kinds: one for every rail, or one per rail; unchanged when none were given. */
        ConnectionSpec apply(ConnectionSpec spec) {
            return TransportOption.apply(spec, kinds);
        }
    }

    /** {@code spec} with {@code kinds}: one for every rail, or one per rail; unchanged when null. */
    static ConnectionSpec apply(ConnectionSpec spec, @Nullable List<ChannelKind> kinds) {
        if (kinds == null) {
            return spec;
        }
        return kinds.size() == 1 ? spec.channelKind(kinds.get(0)) : spec.channelKinds(kinds);
    }

    private TransportOption() {
    }

    /** The option's spelling of {@code kinds}, e.g. {@code ud} or {@code eager,ud}. */
    static String describe(List<ChannelKind> kinds) {
        StringBuilder b = new StringBuilder();
        for (ChannelKind k : kinds) {
            b.append(b.length() > 0 ? "," : "").append(switch (k) {
                case RC_SEND_RECV -> "rc";
                case EAGER_RDMA -> "eager";
                case RELIABLE_UD -> "ud";
                case RC_DR -> "rc-dr";
            });
        }
        return b.toString();
    }

    /**
     * @param transport the {@code --transport} value, or null when not given
     * @param eager     the {@code --eager} value, or null when not given (then on, or what the transport implies)
     * @param rails     the connection's rails
     * @throws UserError naming the value and the fix: an unknown kind, a list whose length is neither 1 nor
     *                   {@code rails}, an {@code --eager} value that is not on/off or that contradicts the list
     */
    static Choice parse(@Nullable String transport, @Nullable String eager, int rails) {
        Boolean eagerOn = eager == null ? null : EagerOption.parse(eager);
        if (transport == null) {
            return new Choice(null, eagerOn == null || eagerOn);
        }
        String[] names = transport.split(",", -1);
        if (names.length != 1 && names.length != rails) {
            throw new UserError("--transport gives " + names.length + " kinds (" + transport + ") for " + rails
                + " rails; give one kind for every rail or one per rail");
        }
        List<ChannelKind> kinds = new ArrayList<>();
        for (String n : names) {
            kinds.add(switch (n) {
                case "rc" -> ChannelKind.RC_SEND_RECV;
                case "eager" -> ChannelKind.EAGER_RDMA;
                case "ud" -> ChannelKind.RELIABLE_UD;
                case "rc-dr" -> ChannelKind.RC_DR;
                default -> throw new UserError("--transport must be rc, eager, ud or rc-dr (or a comma list of them, one per rail) but "
                    + (names.length == 1 ? "it was " : "one was ") + "'" + n + "'");
            });
        }
        boolean anyEager = kinds.contains(ChannelKind.EAGER_RDMA);
        if (eagerOn != null && eagerOn != anyEager) {
            throw new UserError("--eager " + eager + " conflicts with --transport " + transport + ": "
                + (eagerOn ? "no rail is eager; drop --eager or give --transport eager" : "a rail is eager; drop --eager off or choose rc/ud/rc-dr for it"));
        }
        return new Choice(List.copyOf(kinds), anyEager);
    }
}
