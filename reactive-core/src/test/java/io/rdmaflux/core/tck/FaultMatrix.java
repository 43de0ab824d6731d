package io.rdmaflux.core.tck;

import io.rdmaflux.core.tck.ConnectionTckFixture.Side;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.jspecify.annotations.Nullable;
import org.opentest4j.TestAbortedException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault matrix of issue 20, one channel kind on one fabric per concrete class: every fault the pair
 * can inject, one cell each, with what the user sees (the send's and the receive stream's outcome) and
 * the counts that must hold (delivered; lost = sent by a send that completed but not delivered;
 * duplicated; misordered: both 0 in the delivered prefix). Every cell also asserts them, so a cell that
 * breaks fails the build; leaks (buffers, soft-provider resources, threads) are the module's
 * {@code RdmaLeakCheckExtension}'s, after each cell.
 *
 * <p>A cell that fails writes a row too, saying FAILS and the error, so the table shows it; it then fails
 * the build, unless the suite names it as a known failure ({@link #knownFailure}), when it is reported
 * as skipped with that cause instead (the table still says FAILS, with the cause).
 *
 * <p>Each cell appends one tab-separated row to {@code target/fault-matrix/cells.tsv};
 * {@code scripts/fault-matrix.sh} runs the suites and turns the rows into the README table.
 * {@code -Dfaultmatrix.full=true} sends 10x the messages (the script's full run); the default is the
 * CI-sized run (about a second a cell).
 */
@Tag("fault-matrix")
public abstract class FaultMatrix {
    private static final boolean FULL = Boolean.getBoolean("faultmatrix.full");
    /** Messages per direction of a cell. */
    protected static final int MESSAGES = FULL ? 2_000 : 200;
    /** The fraction of frames (RC) or datagrams (UD) the corruption cell corrupts, each way on every rail. */
    protected static final double CORRUPT_RATE = 0.01;
    private static final String CORRUPTION = "corruption 1 %";
    private static final String SLOW_CONSUMER = "slow consumer stalls (holds " + ConnectionTck.RECEIVE_BUFFERS + ", asks no more)";

    /** The channel kind's column name, e.g. "RC send/recv". */
    protected abstract String kind();

    /** The fabric's row name, e.g. "mem (virtual time)". */
    protected abstract String fabric();

    protected abstract ConnectionTckFixture openPair(PairOptions options);

    /** Whether {@link #openPair} injects {@link PairOptions#railFaults()}. */
    protected abstract boolean supportsRailFaults();

    /**
     * Why cell {@code fault} (its row name in the table) is known to fail on this pair, naming the bug and
     * where it is tracked, or null (the default) when it must pass. A known failure that fails is written
     * as FAILS with this cause and skipped; one that passes is written as passing.
     */
    protected @Nullable String knownFailure(String fault) {
        return null;
    }

    /** What the wire faults did, for the cell's note: the RC fault model's counters unless overridden. */
    protected String wireFaultNote(ConnectionTckFixture fx) {
        return fx.railFaultCounters().toString();
    }

    /**
     * What the corruption cell's faults did: {@code injected} frames the fault model corrupted,
     * {@code caught} of them the receiver dropped, and {@code what} (the table's words for both).
     */
    public record Corruption(long injected, long caught, String what) {
        @Override
        public String toString() {
            return caught + " of " + injected + " " + what;
        }
    }

    /** The corruption cell's counts: the RC fault model's corrupted frames and the receiving NICs' ICRC drops unless overridden. */
    protected Corruption corruption(ConnectionTckFixture fx) {
        RailFaultCounters c = fx.railFaultCounters();
        return new Corruption(c.framesCorrupted(), c.icrcDrops(), "corrupted RC frames dropped by the receiving NIC's ICRC check (icrcDrops)");
    }

    /** Runs one cell: a failure is written as a FAILS row, then rethrown (or skipped if it is a known failure). */
    private void cell(String fault, Runnable body) {
        long start = System.nanoTime();
        try {
            body.run();
        } catch (TestAbortedException e) {
            throw e;
        } catch (RuntimeException | Error e) {
            String known = knownFailure(fault);
            String why = simpleName(e) + ": " + String.valueOf(e.getMessage());
            if (why.length() > 200) {
                why = why.substring(0, 200) + "...";
            }
            String seen = "FAILS" + (known != null ? " (known: " + known + ")" : "") + ": " + why;
            writeRow(fault, seen, "-", "-", "-", "-", (System.nanoTime() - start) / 1_000_000, "");
            if (known != null) {
                Assumptions.abort("known failure (" + known + "): " + why);
            }
            throw e;
        }
    }

    protected PairOptions options(int rails) {
        return ProcessFaultCells.baseOptions(rails);
    }

    /**
     * Whether this suite runs the process rows ({@link ProcessFaultCells}: the peer a child JVM on loopback,
     * killed with SIGKILL, then restarted): by default on the net loopback fabric only.
     */
    protected boolean runsPeerProcess() {
        return fabric().equals("net loopback");
    }

    // ------------------------------------------------------------------ cells

    @ParameterizedTest(name = "{0}")
    @EnumSource(RailFaultProfile.class)
    void wireFault(RailFaultProfile profile) {
        Assumptions.assumeTrue(supportsRailFaults(), "this pair injects no RC wire faults");
        cell(faultName(profile), () -> wireFaultCell(profile));
    }

    private static String faultName(RailFaultProfile profile) {
        return profile.name().toLowerCase().replace("_percent", " %").replace('_', ' ');
    }

    private void wireFaultCell(RailFaultProfile profile) {
        try (ConnectionTckFixture fx = openPair(options(2).railFaults(profile.faults()))) {
            Assumptions.assumeTrue(fx.virtualTime() || !profile.retriesMayRunOut(), "fixed outcome in virtual time only");
            long start = System.nanoTime();
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.LIMIT_RATE).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("the send ends under " + profile + "; " + r + ", " + s, () -> s.terminated() && (r.received() == MESSAGES || r.terminated()));
            fx.settle();
            String seen = s.completed() ? "send completes" : "send fails: " + simpleName(s.error());
            if (!s.completed()) {
                assertTrue(profile.retriesMayRunOut(), "only a profile whose retries may run out fails: " + s);
            }
            record(faultName(profile), seen, r, s, start, profile.faults() + "; " + wireFaultNote(fx));
        }
    }

    @Test
    void corruption() {
        Assumptions.assumeTrue(supportsRailFaults(), "this pair injects no wire faults");
        cell(CORRUPTION, this::corruptionCell);
    }

    /**
     * {@value #CORRUPT_RATE} of the frames corrupted each way on every rail: the send completes, every message
     * arrives once, in order and byte for byte (a corrupted one never), and every corruption injected was
     * caught by the receiver, counted, and repaired by retransmission.
     */
    private void corruptionCell() {
        RailFaults faults = RailFaults.corruption(CORRUPT_RATE, 501);
        try (ConnectionTckFixture fx = openPair(options(2).railFaults(faults))) {
            long start = System.nanoTime();
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.LIMIT_RATE).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("the send ends under " + faults + "; " + r + ", " + s, () -> s.terminated() && (r.received() == MESSAGES || r.terminated()));
            fx.settle();
            assertTrue(s.completed(), "the send completes, the corrupted frames retransmitted: " + s);
            Corruption first = corruption(fx);
            assertTrue(first.injected() > 0, "frames were corrupted: " + first);
            fx.await("every corrupted frame is caught: " + first, () -> corruption(fx).caught() >= corruption(fx).injected());
            Corruption c = corruption(fx);
            assertEquals(c.injected(), c.caught(), "every corruption injected is caught once: " + c);
            record(CORRUPTION, "send completes; " + c, r, s, start, faults + "; " + wireFaultNote(fx));
        }
    }

    @Test
    void oneRailDownMidStream() {
        cell("one of 2 rails down mid-stream (failover)", this::oneRailDownMidStreamCell);
    }

    private void oneRailDownMidStreamCell() {
        try (ConnectionTckFixture fx = openPair(options(2).fastRailFailureDetection())) {
            Assumptions.assumeTrue(fx.supportsRailFailure(), "this pair cannot take a port down");
            long start = System.nanoTime();
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("a third arrives", () -> r.received() >= MESSAGES / 3 || s.terminated());
            fx.failRail(Side.CLIENT, 1);
            fx.await("the send ends after the rail failed; " + r + ", " + s, () -> s.terminated() && (r.received() == MESSAGES || r.terminated()));
            fx.settle();
            assertTrue(s.completed(), "the other rail carries the rest: " + s);
            assertEquals(MESSAGES, r.received());
            record("one of 2 rails down mid-stream (failover)", "send completes on the surviving rail", r, s, start, "");
        }
    }

    @Test
    void oneRailDownAndBackUpMidStream() {
        cell("one of 2 rails down, back up mid-stream", this::oneRailDownAndBackUpMidStreamCell);
    }

    private void oneRailDownAndBackUpMidStreamCell() {
        try (ConnectionTckFixture fx = openPair(options(2).fastRailFailureDetection())) {
            Assumptions.assumeTrue(fx.supportsRailFailure(), "this pair cannot take a port down");
            long start = System.nanoTime();
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("a third arrives", () -> r.received() >= MESSAGES / 3 || s.terminated());
            fx.failRail(Side.SERVER, 0);
            fx.await("two thirds arrive", () -> r.received() >= 2 * MESSAGES / 3 || s.terminated());
            fx.restoreRail(Side.SERVER, 0);
            fx.await("the send ends after the rail came back; " + r + ", " + s, () -> s.terminated() && (r.received() == MESSAGES || r.terminated()));
            fx.settle();
            assertTrue(s.completed(), "the other rail carries the rest: " + s);
            record("one of 2 rails down, back up mid-stream", "send completes (the connection stays on the other rail)", r, s, start, "");
        }
    }

    @Test
    void allRailsDownMidStream() {
        cell("all rails down mid-stream", this::allRailsDownMidStreamCell);
    }

    private void allRailsDownMidStreamCell() {
        try (ConnectionTckFixture fx = openPair(options(2).fastRailFailureDetection())) {
            Assumptions.assumeTrue(fx.supportsRailFailure(), "this pair cannot take a port down");
            long start = System.nanoTime();
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("a third arrives", () -> r.received() >= MESSAGES / 3 || s.terminated());
            fx.failRail(Side.CLIENT, 0);
            fx.failRail(Side.CLIENT, 1);
            fx.await("send and receive end after every rail failed; " + r + ", " + s, () -> s.terminated() && r.terminated());
            assertTrue(s.error() != null, "the send fails: " + s);
            record("all rails down mid-stream", "send fails: " + simpleName(s.error()) + "; receive fails: " + simpleName(r.error()),
                r, s, start, "");
        }
    }

    @Test
    void publisherErrorMidSend() {
        cell("publisher error mid-send", this::publisherErrorMidSendCell);
    }

    private void publisherErrorMidSendCell() {
        try (ConnectionTckFixture fx = openPair(options(2))) {
            long start = System.nanoTime();
            int before = MESSAGES / 2;
            IllegalStateException boom = new IllegalStateException("publisher failed");
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.UNBOUNDED).subscribe(fx.server());
            TckSend s = TckSend.startFailing(fx, fx.client(), 0, before, ConnectionTck::faultSize, boom, () -> Long.MAX_VALUE);
            fx.await("the send fails after its messages arrived; " + r + ", " + s, () -> s.terminated() && r.received() == before);
            fx.settle();
            assertSame(boom, s.error());
            // the connection stays usable: the next send continues the PSNs
            TckSend after = TckSend.start(fx, fx.client(), before, 10, ConnectionTck::faultSize);
            fx.await("a later send delivers", () -> after.terminated() && r.received() == before + 10);
            after.assertCompleted();
            record("publisher error mid-send", "that send fails with the publisher's error; the connection goes on", r, s, start, "",
                before + 10);
        }
    }

    @Test
    void subscriberCancelMidStream() {
        cell("subscriber cancel mid-stream", this::subscriberCancelMidStreamCell);
    }

    private void subscriberCancelMidStreamCell() {
        try (ConnectionTckFixture fx = openPair(options(2))) {
            long start = System.nanoTime();
            int cancelAt = MESSAGES / 4;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).demand(Demand.UNBOUNDED).cancelAfter(cancelAt).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("the send ends after the receiver cancelled; " + r + ", " + s, () -> s.terminated());
            fx.settle();
            assertEquals(cancelAt, r.received(), "nothing is delivered after the cancel");
            record("subscriber cancel mid-stream", s.completed() ? "send completes" : "send fails: " + simpleName(s.error()),
                r, s, start, "", -1);
        }
    }

    @Test
    void slowConsumerStalls() {
        cell(SLOW_CONSUMER, this::slowConsumerStallsCell);
    }

    private void slowConsumerStallsCell() {
        try (ConnectionTckFixture fx = openPair(options(2))) {
            long start = System.nanoTime();
            int held = ConnectionTck.RECEIVE_BUFFERS;
            TckReceiver r = TckReceiver.builder(fx, ConnectionTck::faultSize).holding(held).subscribe(fx.server());
            TckSend s = TckSend.start(fx, fx.client(), 0, MESSAGES, ConnectionTck::faultSize);
            fx.await("the held messages arrive", () -> r.received() == held);
            // the consumer stalls: in virtual time for 10 s of the pair's clock; in real time for what settle takes
            for (int i = 0; i < (fx.virtualTime() ? 100 : 3); i++) {
                fx.settle();
            }
            long emittedWhileStalled = s.emitted();
            assertTrue(emittedWhileStalled <= held * 2L + ConnectionTck.RENDEZVOUS_BUFFERS + ConnectionTck.SEND_QUEUE + 2L * ConnectionTck.RECEIVE_BUFFERS,
                "the sender takes no more than credits allow while the consumer stalls: " + s);
            assertTrue(!s.terminated(), "the send waits, no error and no drop: " + s);
            r.stopHolding();
            r.releaseHeld();
            r.request(Long.MAX_VALUE);
            fx.await("everything arrives once the consumer resumes; " + r + ", " + s, () -> s.terminated() && r.received() == MESSAGES);
            s.assertCompleted();
            record(SLOW_CONSUMER, "send waits (took " + emittedWhileStalled
                + " messages while stalled), completes after", r, s, start, "");
        }
    }

    /**
     * The peer is a child JVM ({@link FaultPeerMain}) streaming to this one; at a random point (seed from
     * {@code -Dfaultmatrix.seed}, else the clock; the row's note gives it) it gets SIGKILL: this side's
     * receive and send fail within {@link ProcessFaultCells#FAILURE_BOUND_MS}, and what arrived is a verified
     * prefix. Then a connect with retry, started while nothing listens, reaches the peer started again on its
     * port, and a full stream arrives. Leaks on this side (the survivor) are the module extension's, after.
     */
    @Test
    void peerProcessKilledThenRestarted() {
        Assumptions.assumeTrue(runsPeerProcess(), "the process rows run on the net loopback fabric");
        long seed = Long.getLong("faultmatrix.seed", System.nanoTime());
        try (ProcessFaultCells p = new ProcessFaultCells(options(2), java.util.Collections.nCopies(2, "127.0.0.1"),
            ProcessFaultCells.childJvm(2), MESSAGES)) {
            cell(ProcessFaultCells.KILLED, () -> writeRow(p.killedAtRandomPoint(seed)));
            cell(ProcessFaultCells.RESTARTED, () -> writeRow(p.restarted()));
        }
    }

    // ------------------------------------------------------------------ rows

    private void writeRow(ProcessFaultCells.Row r) {
        writeRow(r.fault(), r.seen(), Integer.toString(r.delivered()), Integer.toString(r.lost()), Integer.toString(r.dup()),
            Integer.toString(r.misordered()), r.ms(), r.note());
    }

    private void record(String fault, String seen, TckReceiver r, TckSend s, long startNs, String note) {
        record(fault, seen, r, s, startNs, note, s.completed() ? MESSAGES : -1);
    }

    /** {@code expected}: messages a completed send must have delivered, or -1 when only the prefix is checked. */
    private void record(String fault, String seen, TckReceiver r, TckSend s, long startNs, String note, int expected) {
        r.assertNoFailure();
        List<Integer> psns = r.psns();
        Set<Integer> distinct = new HashSet<>(psns);
        int dup = psns.size() - distinct.size();
        int misordered = 0;
        for (int i = 1; i < psns.size(); i++) {
            if (psns.get(i) < psns.get(i - 1)) {
                misordered++;
            }
        }
        int lost = expected >= 0 ? expected - r.received() : 0;
        assertEquals(0, dup, "duplicates in " + fault);
        assertEquals(0, misordered, "misordered in " + fault);
        assertEquals(0, lost, "lost in " + fault + ": " + r + ", " + s);
        for (int i = 0; i < psns.size(); i++) {
            assertEquals(i, psns.get(i), "the delivered messages are a PSN prefix");
        }
        writeRow(fault, seen, Integer.toString(r.received()), Integer.toString(lost), Integer.toString(dup),
            Integer.toString(misordered), (System.nanoTime() - startNs) / 1_000_000, note);
    }

    private void writeRow(String fault, String seen, String received, String lost, String dup, String misordered, long ms, String note) {
        appendRow(Path.of("target", "fault-matrix", "cells.tsv"), kind(), fabric(), fault, seen, received, lost, dup, misordered, ms, note);
    }

    /** Appends one table row (tab-separated, as scripts/FaultMatrixTable.java reads it) to {@code out}. */
    static void appendRow(Path out, String kind, String fabric, String fault, String seen, String received, String lost, String dup,
                          String misordered, long ms, String note) {
        String row = String.join("\t", kind, fabric, fault, clean(seen), received, lost, dup, misordered, Long.toString(ms),
            clean(note)) + "\n";
        try {
            Files.createDirectories(out.getParent());
            Files.writeString(out, row, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One line of table text: no tabs, newlines or pipes. */
    private static String clean(String s) {
        return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ').replace('|', '/');
    }

    private static String simpleName(Throwable t) {
        return t == null ? "-" : t.getClass().getSimpleName();
    }
}
