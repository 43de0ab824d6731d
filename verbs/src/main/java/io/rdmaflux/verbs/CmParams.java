package io.rdmaflux.verbs;

import java.util.List;

/**
 * What a connection request or reply carries, as in {@code rdma_cm}'s connect/accept: one
 * {@link QpEndpoint} per QP the connection uses (several for a multi-rail connection, one per
 * rail, in rail order) and opaque private data (rkeys, buffer sizes, credits).
 *
 * @param endpoints   the sender's QP endpoints, in rail order; not empty
 * @param privateData opaque bytes, at most {@link ConnectionManager#MAX_PRIVATE_DATA_BYTES}
 */
public record CmParams(List<QpEndpoint> endpoints, byte[] privateData) {
    public CmParams {
        endpoints = List.copyOf(endpoints);
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("CmParams needs at least one QP endpoint");
        }
        if (privateData.length > ConnectionManager.MAX_PRIVATE_DATA_BYTES) {
            throw new IllegalArgumentException("private data is " + privateData.length + " bytes but at most "
                + ConnectionManager.MAX_PRIVATE_DATA_BYTES + " fit in a connection request");
        }
    }
}
