/*
 * DSL builders for node and connection specs.
 */
@file:JvmName("RdmaSpecs")

package io.rdmaflux.coroutines

import io.rdmaflux.core.ConnectionSpec
import io.rdmaflux.core.RdmaNode
import io.rdmaflux.core.channel.ChannelFactory
import kotlin.time.Duration
import kotlin.time.Duration.Companion.nanoseconds

/**
 * Builds an [RdmaNode]; the block configures an [RdmaNode.Builder]:
 *
 * ```
 * val node = rdmaNode {
 *     provider(soft)
 *     ports(1, 2)
 *     receiveBuffers(64)
 * }
 * ```
 *
 * @throws NullPointerException if no provider was given
 * @throws IllegalArgumentException naming the value if sizes are out of range or do not fit together
 * @throws io.rdmaflux.verbs.VerbsException if the device or a port does not exist
 */
inline fun rdmaNode(configure: RdmaNode.Builder.() -> Unit): RdmaNode = RdmaNode.builder().apply(configure).build()

/**
 * Builds a [ConnectionSpec]:
 *
 * ```
 * val spec = connectionSpec {
 *     rails = 2
 *     striping = adaptiveFactory          // a ChannelFactory from rail-striping
 *     connectTimeout = 2.seconds
 * }
 * ```
 *
 * @throws IllegalArgumentException naming the value if [ConnectionSpecBuilder.rails] is outside
 *   [1, 255] or the timeout is not positive
 */
inline fun connectionSpec(configure: ConnectionSpecBuilder.() -> Unit): ConnectionSpec =
    ConnectionSpecBuilder().apply(configure).build()

/** The mutable side of [connectionSpec]; defaults are those of [ConnectionSpec.defaults]. */
class ConnectionSpecBuilder {
    /** Rails (one subchannel per node port, in port order), in [1, 255]. */
    var rails: Int = ConnectionSpec.defaults().rails()

    /** The multiplexing/striping policy factory; `null` keeps the default round robin. */
    var striping: ChannelFactory? = null

    /** How long the connect may take before it fails. */
    var connectTimeout: Duration = ConnectionSpec.defaults().connectTimeoutNs().nanoseconds

    /** Builds the immutable spec. */
    fun build(): ConnectionSpec {
        require(connectTimeout.isPositive() && connectTimeout.isFinite()) {
            "connectTimeout > 0 and finite required but it was $connectTimeout"
        }
        var spec = ConnectionSpec.rails(rails).connectTimeoutNs(connectTimeout.inWholeNanoseconds)
        striping?.let { spec = spec.striping(it) }
        return spec
    }
}
