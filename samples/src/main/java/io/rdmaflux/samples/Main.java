package io.rdmaflux.samples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.util.Arrays;

/**
 * {@code rdmaflux} — the samples' command line: {@code pipeline} (the main job), {@code records-kt}
 * (the record pipeline on the Kotlin coroutine façade), {@code bench} (OSU-style benchmarks), {@code soak} (a long verified run with rail flaps and a leak test) and
 * {@code rsocket-stream} (an RSocket request-stream service over rdmaflux rails).
 *
 * <p>Exit codes: 0 success, 1 error (one line on stderr; {@code --verbose} adds the stack trace),
 * 2 bad command line, 3 verification failed.
 */
@Command(name = "rdmaflux", mixinStandardHelpOptions = true, version = "rdmaflux 0.1.0-SNAPSHOT",
    description = "Reactive Streams over RDMA: samples and benchmarks.",
    subcommands = {PipelineCommand.class, KotlinRecordsCommand.class, BenchCommand.class, RSocketStreamCommand.class, SoakCommand.class,
        CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    @picocli.CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // progressbar and chronicle bring SLF4J without a binding; its "no providers" notice is noise here
        System.setProperty("slf4j.internal.verbosity", "ERROR");
        System.exit(run(args, System.out, System.err));
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Runs the command line; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        boolean verbose = Arrays.asList(args).contains("--verbose");
        PrintWriter errWriter = new PrintWriter(err, true);
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(errWriter);
        cl.setParameterExceptionHandler((ex, a) -> {
            String cmd = ex.getCommandLine().getCommandName();
            errWriter.println(cmd + ": " + ex.getMessage() + " (see " + ("rdmaflux".equals(cmd) ? "" : "rdmaflux ") + cmd + " --help)");
            if (verbose) {
                ex.printStackTrace(errWriter);
            }
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            errWriter.println("rdmaflux " + commandLine.getCommandName() + ": " + describe(ex));
            if (verbose) {
                ex.printStackTrace(errWriter);
            }
            return 1;
        });
        return cl.execute(args);
    }

    /** The message of {@code e}'s innermost cause that has one (Reactor and futures wrap the real error). */
    static String rootMessage(Throwable e) {
        String msg = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && !t.getMessage().isBlank() && !(t.getCause() != null && t.getMessage().equals(t.getCause().toString()))) {
                msg = t.getMessage();
            }
            if (t.getCause() == t) {
                break;
            }
        }
        return msg;
    }

    /** One line for any error: user errors as they are, others with their type. */
    static String describe(Throwable e) {
        Throwable t = e;
        // Reactor wraps checked exceptions and block() adds a suppressed trace; show the root
        while ((t instanceof java.util.concurrent.CompletionException || t.getClass().getName().startsWith("reactor.core.Exceptions$"))
            && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof UserError) {
            return t.getMessage();
        }
        String msg = t.getMessage();
        return (msg == null || msg.isBlank() ? t.getClass().getSimpleName() : msg) + " (" + t.getClass().getSimpleName()
            + "; --verbose for details)";
    }
}
