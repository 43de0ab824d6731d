package io.rdmaflux.core;

import io.rdmaflux.core.testing.LeakRecorder;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RdmaLeakReporter}: node close reports, per connection, the received messages the application
 * never released (every kind of received message), and nothing else. INVOKER mode, virtual time.
 */
class RdmaLeakReporterTest {
    /** 5000-byte messages: two do not fit one 8 KiB frame, so each has a receive buffer of its own. */
    private static final int WHOLE_FRAME_BYTES = 5_000;

    @Test
    void nodeCloseReportsTheMessagesHeldInTheirOwnReceiveBuffersNamingTheConnection() {
        InvokerPair p = InvokerPair.open();
        List<RdmaMessage> held = receiveAndHold(p, 4, WHOLE_FRAME_BYTES);
        String connection = ConnectionProbe.name(p.server);

        List<RdmaLeakReporter.Leak> leaks = closeRecordingLeaks(p);

        assertEquals(1, leaks.size(), leaks.toString());
        RdmaLeakReporter.Leak leak = leaks.get(0);
        assertEquals(connection, leak.connection());
        assertEquals(4, leak.messages());
        assertEquals(RdmaLeakReporter.Leak.MAX_EXAMPLES, leak.examples().size());
        List<String> heldNames = held.stream().map(RdmaMessage::toString).toList();
        assertTrue(heldNames.containsAll(leak.examples()), leak.examples() + " are among " + heldNames);
        assertTrue(leak.examples().get(0).contains(" 5000 bytes, receive buffer"), leak.examples().toString());
        assertTrue(leak.toString().contains("4 received messages were not released") && leak.toString().contains(connection),
            leak.toString());
    }

    @Test
    void nodeCloseReportsMessagesOfPackedFramesHeldByTheApplication() {
        InvokerPair p = InvokerPair.open();
        List<RdmaMessage> held = receiveAndHold(p, 40, 4);
        assertTrue(ConnectionProbe.packedFramesSent(p.client) > 0, "messages travelled packed");
        // a few released: only the others leak, though their buffers are shared with released ones
        for (int i = 0; i < 40; i += 3) {
            held.get(i).release();
        }

        List<RdmaLeakReporter.Leak> leaks = closeRecordingLeaks(p);

        assertEquals(1, leaks.size(), leaks.toString());
        assertEquals(40 - 14, leaks.get(0).messages());
        assertEquals(RdmaLeakReporter.Leak.MAX_EXAMPLES, leaks.get(0).examples().size());
    }

    @Test
    void nodeCloseReportsRendezvousAndReassembledMessagesHeldByTheApplication() {
        InvokerPair rendezvous = InvokerPair.open(b -> b.bufferBytes(1024).maxMessageBytes(64 * 1024).rendezvousBuffers(2));
        receiveAndHold(rendezvous, 1, 50_000);
        List<RdmaLeakReporter.Leak> leaks = closeRecordingLeaks(rendezvous);
        assertEquals(1, leaks.size(), leaks.toString());
        assertEquals(1, leaks.get(0).messages());
        assertTrue(leaks.get(0).examples().get(0).contains("50000 bytes, rendezvous buffer"), leaks.get(0).examples().toString());

        InvokerPair fragments = InvokerPair.open(b -> b.bufferBytes(1024).maxMessageBytes(64 * 1024).rendezvousBuffers(0));
        receiveAndHold(fragments, 2, 3_000);
        leaks = closeRecordingLeaks(fragments);
        assertEquals(1, leaks.size(), leaks.toString());
        assertEquals(2, leaks.get(0).messages(), "reassembled messages are counted");
        assertEquals(List.of(), leaks.get(0).examples(), "and not kept anywhere to be named");
    }

    @Test
    void aMessageReleasedBeforeNodeCloseIsNoLeakEvenBeforeTheProgressThreadSawTheRelease() {
        InvokerPair p = InvokerPair.open();
        List<RdmaMessage> held = receiveAndHold(p, 3, WHOLE_FRAME_BYTES);
        // released outside a duty cycle: each waits in the connection's queue until the next one
        held.forEach(RdmaMessage::release);
        assertEquals(3, p.serverNode.metrics().buffersOutstanding(), "the releases are not drained yet");

        assertEquals(List.of(), closeRecordingLeaks(p));
    }

    @Test
    void aClosedConnectionKeepsTheBuffersOfHeldMessagesUntilTheyAreReleasedWithoutALeak() {
        InvokerPair p = InvokerPair.open();
        List<RdmaMessage> held = receiveAndHold(p, 2, WHOLE_FRAME_BYTES);
        p.client.close();
        p.drive();
        assertTrue(p.server.isDisposed());
        assertEquals(2, p.serverNode.metrics().buffersOutstanding(), "the closed connection still holds the buffers");
        held.forEach(RdmaMessage::release);
        p.drive();
        assertEquals(0, p.serverNode.metrics().buffersOutstanding());

        assertEquals(List.of(), closeRecordingLeaks(p));
    }

    @Test
    void theLoggingReporterWritesOneWarningNamingTheConnectionAndTheMessages() {
        InvokerPair p = InvokerPair.open();
        List<RdmaMessage> held = receiveAndHold(p, 2, WHOLE_FRAME_BYTES);
        String connection = ConnectionProbe.name(p.server);
        String example = held.get(0).toString();
        Logger logger = Logger.getLogger(RdmaLeakReporter.class.getName());
        List<LogRecord> records = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        boolean parents = logger.getUseParentHandlers();
        logger.addHandler(capture);
        logger.setUseParentHandlers(false);
        RdmaLeakReporter previous = RdmaLeakReporter.install(RdmaLeakReporter.logging());
        try {
            p.close();
        } finally {
            RdmaLeakReporter.install(previous);
            logger.removeHandler(capture);
            logger.setUseParentHandlers(parents);
        }
        assertEquals(1, records.size(), records.toString());
        LogRecord record = records.get(0);
        assertEquals(Level.WARNING, record.getLevel());
        String line = record.getMessage();
        assertTrue(line.startsWith("LEAK: 2 received messages were not released") && line.contains(connection) && line.contains(example)
            && line.contains("release each received message exactly once"), line);
    }

    @Test
    void installReturnsTheReporterItReplacesAndRefusesNull() {
        LeakRecorder mine = new LeakRecorder();
        RdmaLeakReporter before = RdmaLeakReporter.installed();
        RdmaLeakReporter replaced = RdmaLeakReporter.install(mine);
        try {
            assertSame(before, replaced);
            assertSame(mine, RdmaLeakReporter.installed());
            NullPointerException e = assertThrows(NullPointerException.class, () -> RdmaLeakReporter.install(null));
            assertEquals("reporter", e.getMessage());
            assertSame(mine, RdmaLeakReporter.installed(), "a refused install changes nothing");
        } finally {
            RdmaLeakReporter.install(before);
        }
    }

    @Test
    void aLeakNamesAtLeastOneMessage() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RdmaLeakReporter.Leak("c", 0, List.of()));
        assertEquals("messages > 0 required but it was 0", e.getMessage());
    }

    /** The server receives {@code n} messages of {@code bytes} bytes and keeps them all, unreleased. */
    private static List<RdmaMessage> receiveAndHold(InvokerPair p, int n, int bytes) {
        List<RdmaMessage> held = new ArrayList<>();
        p.server.receive().subscribe(held::add);
        SendOutcome sent = SendOutcome.of(p.client.send(Flux.range(0, n).map(i -> RdmaMessage.of(new byte[bytes]))));
        p.runUntil(() -> sent.completed() && held.size() == n);
        return held;
    }

    /** Closes the pair with a recorder installed as the reporter (this test's leaks are its own to check). */
    private static List<RdmaLeakReporter.Leak> closeRecordingLeaks(InvokerPair p) {
        LeakRecorder recorder = new LeakRecorder();
        RdmaLeakReporter previous = RdmaLeakReporter.install(recorder);
        try {
            p.close();
        } finally {
            RdmaLeakReporter.install(previous);
        }
        return recorder.leaks();
    }
}
