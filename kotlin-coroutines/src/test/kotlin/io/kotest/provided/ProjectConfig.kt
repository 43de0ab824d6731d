package io.kotest.provided

import io.kotest.core.config.AbstractProjectConfig
import io.kotest.core.extensions.Extension
import io.rdmaflux.coroutines.RdmaLeakListener

/** Kotest's project configuration (found by its package and name): every spec gets [RdmaLeakListener]. */
class ProjectConfig : AbstractProjectConfig() {
    override val extensions: List<Extension> = listOf(RdmaLeakListener)
}
