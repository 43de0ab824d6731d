/**
 * JMH benchmarks of rail-striping over the soft provider's token-bucket shaped rails, in real time:
 * stripes are RDMA WRITEs scheduled by {@link io.rdmaflux.striping.CommunicationScheduler}.
 * {@link io.rdmaflux.benchmarks.striping.StripingFigures} runs them and prints the ratios.
 */
@NullMarked
package io.rdmaflux.benchmarks.striping;

import org.jspecify.annotations.NullMarked;
