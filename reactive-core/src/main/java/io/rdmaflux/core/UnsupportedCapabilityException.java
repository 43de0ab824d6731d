package io.rdmaflux.core;

/**
 * An operation needs a capability the node's provider does not have, for example one-sided atomics
 * ({@code DeviceCapabilities.atomics()}) on the {@code disni} provider. Signalled before
 * anything was posted; the connection stays usable. The message names the capability, the provider's
 * device and the fix.
 */
public final class UnsupportedCapabilityException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final String capability;

    /** @param capability the missing capability's name, as {@code DeviceCapabilities} calls it (e.g. {@code atomics}) */
    public UnsupportedCapabilityException(String capability, String message) {
        super(Category.UNSUPPORTED, message);
        this.capability = capability;
    }

    /** The missing capability, as {@code DeviceCapabilities} calls it. */
    public String capability() {
        return capability;
    }
}
