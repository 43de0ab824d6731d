package io.rdmaflux.core.reorder;

import io.rdmaflux.core.RdmaException;

/**
 * A message arrived whose PSN is too far ahead of the ESN for the reorder window, or is a
 * duplicate / older than the ESN.
 */
public final class ReorderWindowOverflowException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public ReorderWindowOverflowException(String message) {
        super(Category.REORDER, message);
    }
}
