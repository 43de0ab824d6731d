/**
 * Micrometer for rdmaflux: {@link io.rdmaflux.micrometer.RdmaNodeMetrics}, a {@code MeterBinder} per
 * {@link io.rdmaflux.core.RdmaNode} (counters and gauges over the node's connections and rails, a connect
 * timer, a message delivery timer) and an {@code Observation} around {@code connect}.
 */
@NullMarked
package io.rdmaflux.micrometer;

import org.jspecify.annotations.NullMarked;
