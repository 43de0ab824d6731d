package io.rdmaflux.verbs;

/**
 * A provider was asked for by name but cannot run here (unknown name, missing native library, no
 * RDMA device). The message says what is missing and how to fix it.
 */
public final class ProviderUnavailableException extends VerbsException {
    private static final long serialVersionUID = 1L;

    public ProviderUnavailableException(String message) {
        super(message);
    }
}
