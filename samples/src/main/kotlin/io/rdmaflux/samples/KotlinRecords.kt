package io.rdmaflux.samples

import io.rdmaflux.coroutines.receiveAsFlow
import io.rdmaflux.coroutines.send
import io.rdmaflux.core.RdmaMessage
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import kotlinx.coroutines.flow.fold
import kotlinx.coroutines.runBlocking
import picocli.CommandLine.Command
import picocli.CommandLine.Option
import picocli.CommandLine.Parameters
import picocli.CommandLine.Spec
import picocli.CommandLine.Model.CommandSpec
import java.nio.file.Files
import java.nio.file.Path
import java.security.MessageDigest
import java.util.HexFormat
import java.util.Locale
import java.util.concurrent.Callable
import kotlin.io.path.isDirectory
import kotlin.io.path.isRegularFile

/**
 * The record pipeline on the Kotlin coroutine façade: a [Flow] of line batches goes out with
 * `connection.send(flow)`, the receiver folds `receiveAsFlow()` into word counts, and a suspended
 * collector suspends the sender through credits (backpressure end to end, no thread blocked).
 */
@Command(name = "records-kt", mixinStandardHelpOptions = true, sortOptions = false,
    description = ["The record pipeline written with the Kotlin coroutine façade (send(Flow), receiveAsFlow()).",
        "Default input: \$JAVA_HOME/legal."])
class KotlinRecordsCommand : Callable<Int> {
    @Spec
    lateinit var spec: CommandSpec

    @Parameters(arity = "0..1", paramLabel = "INPUT", description = ["Text file or directory."])
    var input: Path? = null

    @Option(names = ["--rails"], description = ["Rails, 1..16 (default \${DEFAULT-VALUE})."])
    var rails: Int = 2

    @Option(names = ["--policy"], description = ["Scheduling policy: ${Policies.CHOICES} (default \${DEFAULT-VALUE})."])
    var policy: String = "adaptive"

    @Option(names = ["--chunk-kib"], description = ["Batch size in KiB, 1..1024 (default \${DEFAULT-VALUE})."])
    var chunkKib: Int = 16

    @Option(names = ["--verbose"], description = ["Print stack traces of errors."])
    var verbose: Boolean = false

    override fun call(): Int {
        if (rails !in 1..16) throw UserError("--rails must be in 1..16 but it was $rails")
        if (chunkKib !in 1..1024) throw UserError("--chunk-kib must be in 1..1024 but it was $chunkKib")
        val source = input ?: PipelineCommand.defaultInput(true)
        val files = textFiles(source)
        val out = spec.commandLine().out
        val settings = InJvmRails.Settings(List(rails) { if (it == 0) 96L shl 20 else 24L shl 20 }, 5_000, 64 * 1024 + 64, 32,
            1 shl 20, 4, Policies.parse(policy, rails))
        val result = InJvmRails.open(settings).use { link -> runBlocking { pipeline(link, files, chunkKib shl 10) } }
        out.println(String.format(Locale.ROOT, "rdmaflux records-kt: %d file(s) of %s, %d bytes in %.2f s over %d rails (%s)",
            files.size, source, result.bytes, result.seconds, rails, policy))
        out.println(String.format(Locale.ROOT, "  %-17s%d lines, %d words, %d distinct", "records", result.counts.records(),
            result.counts.fields(), result.counts.distinct()))
        out.println(String.format(Locale.ROOT, "  %-17s%s", "top words", result.counts.top(8).joinToString { "${it.key}=${it.value}" }))
        out.println(String.format(Locale.ROOT, "  %-17s%s  %s", "sha-256", result.received, if (result.verified) "OK, verified" else "MISMATCH"))
        return if (result.verified) 0 else 3
    }

    class Result(val bytes: Long, val seconds: Double, val counts: WordCounts, val received: String, val verified: Boolean)

    companion object {
        fun textFiles(source: Path): List<Path> {
            if (!Files.exists(source)) throw UserError("input $source does not exist; give an existing file or directory")
            val files = if (source.isDirectory()) Files.walk(source).use { w -> w.filter { it.isRegularFile() }.sorted().toList() } else listOf(source)
            files.firstOrNull { !Files.isReadable(it) }?.let { throw UserError("input $it is not readable; check its permissions") }
            if (files.isEmpty()) throw UserError("input $source holds no files")
            return files
        }

        /** Line batches of at most [chunkBytes] (whole lines), read on the IO dispatcher. */
        fun batches(files: List<Path>, chunkBytes: Int, digest: MessageDigest): Flow<ByteArray> = flow {
            for (file in files) {
                val bytes = Files.readAllBytes(file)
                digest.update(bytes)
                var pos = 0
                while (pos < bytes.size) {
                    var end = minOf(bytes.size, pos + chunkBytes)
                    if (end < bytes.size) {
                        val nl = (end - 1 downTo pos).firstOrNull { bytes[it] == '\n'.code.toByte() }
                        if (nl != null) end = nl + 1
                    }
                    emit(bytes.copyOfRange(pos, end))
                    pos = end
                }
            }
        }.flowOn(Dispatchers.IO)

        suspend fun pipeline(link: InJvmRails, files: List<Path>, chunkBytes: Int): Result = coroutineScope {
            val sourceDigest = MessageDigest.getInstance("SHA-256")
            val start = System.nanoTime()
            val receiving = async(Dispatchers.Default) {
                val digest = MessageDigest.getInstance("SHA-256")
                var bytes = 0L
                val counts = link.receiver().receiveAsFlow(prefetch = 32).fold(WordCounts()) { acc, message ->
                    message.use { m ->
                        val array = m.toByteArray()
                        digest.update(array)
                        bytes += array.size
                        acc.add(String(array, Charsets.ISO_8859_1))
                    }
                    acc
                }
                Triple(counts, bytes, HexFormat.of().formatHex(digest.digest()))
            }
            link.sender().send(flow { batches(files, chunkBytes, sourceDigest).collect { emit(RdmaMessage.of(it)) } })
            link.sender().close()
            val (counts, bytes, received) = receiving.await()
            val seconds = (System.nanoTime() - start) / 1e9
            Result(bytes, seconds, counts, received, received == HexFormat.of().formatHex(sourceDigest.digest()))
        }
    }
}
