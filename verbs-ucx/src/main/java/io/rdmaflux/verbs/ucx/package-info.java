/**
 * The {@code ucx} verbs provider: the soft NIC's RC protocol carried by UCX active messages through
 * JUCX, over whatever UCX finds ({@code tcp} and shared memory anywhere; {@code rc}/{@code ud}/{@code dc}
 * on InfiniBand or RoCE). See {@link io.rdmaflux.verbs.ucx.UcxProvider}.
 */
@NullMarked
package io.rdmaflux.verbs.ucx;

import org.jspecify.annotations.NullMarked;
