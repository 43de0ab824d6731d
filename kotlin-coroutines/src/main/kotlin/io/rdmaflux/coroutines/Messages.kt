/*
 * Building and reading RdmaMessages from Kotlin. RdmaMessage is AutoCloseable, so the standard
 * `use {}` releases it: `message.use { it.asString() }`.
 */
@file:JvmName("RdmaMessages")

package io.rdmaflux.coroutines

import io.rdmaflux.core.RdmaMessage
import kotlinx.coroutines.flow.Flow
import net.openhft.chronicle.bytes.Bytes
import kotlinx.coroutines.flow.map
import org.agrona.DirectBuffer
import org.agrona.MutableDirectBuffer
import java.nio.ByteBuffer

/** Wraps these bytes as a message (not copied: do not modify them until the message is released). */
fun ByteArray.asRdmaMessage(): RdmaMessage = RdmaMessage.of(this)

/** Wraps the remaining bytes of this buffer (not copied; position and limit unchanged). */
fun ByteBuffer.asRdmaMessage(): RdmaMessage = RdmaMessage.of(this)

/** The UTF-8 bytes of this string as a message. */
fun String.toRdmaMessage(): RdmaMessage = RdmaMessage.of(this)

/**
 * A message of [lengthBytes] bytes that [writer] fills when it is sent — in the registered send
 * buffer itself when it fits one frame (no extra copy). [writer] runs on the node's progress thread
 * and must not block or suspend.
 *
 * @throws IllegalArgumentException if [lengthBytes] is negative
 */
fun rdmaMessage(lengthBytes: Int, writer: (buffer: MutableDirectBuffer, offset: Int, lengthBytes: Int) -> Unit): RdmaMessage =
    RdmaMessage.write(lengthBytes, writer)

/**
 * A message of [lengthBytes] bytes that [writer] fills through a Chronicle [Bytes] view of the send slot
 * (Java's `RdmaMessage.write(length, BytesWriter)`): `bytesMessage(12) { writeLong(id); writeInt(n) }`.
 * [writer] runs on the node's progress thread, must not block or suspend, and must write exactly
 * [lengthBytes] bytes (fewer: [IllegalStateException] when sent; more: Chronicle's
 * `BufferOverflowException`). Loads Chronicle: its JVM flags apply (see the README).
 *
 * @throws IllegalArgumentException if [lengthBytes] is negative
 */
fun bytesMessage(lengthBytes: Int, writer: Bytes<*>.() -> Unit): RdmaMessage =
    // writer(bytes), not bytes.writer(): Chronicle's Bytes has a member writer() (a java.io.Writer) that would win
    RdmaMessage.write(lengthBytes, RdmaMessage.BytesWriter { bytes -> writer(bytes) })

/**
 * Reads this message through a Chronicle [Bytes] view (`RdmaMessage.bytes()`, read position 0, read
 * limit its length) with [block] and releases it, also when [block] throws. The view is valid only
 * inside [block].
 *
 * @throws io.rdmaflux.core.IllegalReferenceCountException if the message was already released
 */
inline fun <R> RdmaMessage.consumeBytes(block: (bytes: Bytes<*>) -> R): R = use { block(it.bytes()) }

/**
 * Reads this message's bytes with [block] and releases it, also when [block] throws.
 * The buffer is valid only inside [block].
 *
 * @throws io.rdmaflux.core.IllegalReferenceCountException if the message was already released
 */
inline fun <R> RdmaMessage.consume(block: (content: DirectBuffer) -> R): R = use { block(it.content()) }

/** Copies the bytes out and releases the message. */
fun RdmaMessage.toByteArrayAndRelease(): ByteArray = use { it.toByteArray() }

/** Maps each byte array to a message (wrapped, not copied). */
fun Flow<ByteArray>.asRdmaMessages(): Flow<RdmaMessage> = map { it.asRdmaMessage() }

/**
 * Copies each received message out as a byte array and releases it at once, so the receive buffer
 * (and its credit) goes back before the array is processed.
 */
fun Flow<RdmaMessage>.toByteArrays(): Flow<ByteArray> = map { it.toByteArrayAndRelease() }
