/**
 * The one stripe engine of rdmaflux (seed 000 &sect;4.1, Fig. 2 and Fig. 4): the plan of a message into
 * stripes, the accounting of each stripe (posted, carrier rail, post time, completed), the completion
 * filter, the feedback to the {@link io.rdmaflux.core.stripe.StripePolicy}, and the re-plan after a rail
 * failure. Transport-independent: the connection's rendezvous path (RDMA WRITE stripes, one FIN per
 * rail, seed 000 &sect;5.3) and rail-striping's operators and one-sided rails (seed 002 &sect;3.2) post the
 * stripes their own way and report completions here.
 */
@NullMarked
package io.rdmaflux.core.stripe;

import org.jspecify.annotations.NullMarked;
