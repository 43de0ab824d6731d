package io.rdmaflux.samples;

import io.rdmaflux.core.EagerSpec;

/** The {@code --eager on|off} option of {@code bench} and {@code pipeline}. */
final class EagerOption {
    private EagerOption() {
    }

    /** @throws UserError naming the value unless it is on or off */
    static boolean parse(String value) {
        return switch (value) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new UserError("--eager must be on or off but it was " + value);
        };
    }

    static EagerSpec spec(boolean on) {
        return on ? EagerSpec.DEFAULTS : EagerSpec.OFF;
    }
}
