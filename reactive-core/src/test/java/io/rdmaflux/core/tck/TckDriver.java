package io.rdmaflux.core.tck;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.testng.SkipException;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Runs the TestNG-annotated verification methods of a Reactive Streams TCK class as JUnit 5
 * dynamic tests, so surefire's JUnit platform executes and counts each one without a TestNG
 * engine. Each rule method ({@code required_*}, {@code optional_*}, {@code stochastic_*},
 * {@code untested_*}) becomes one test; the TCK's {@code setUp} runs before each; a TestNG
 * {@link SkipException} becomes a JUnit assumption failure (reported as skipped).
 */
final class TckDriver {
    private TckDriver() {
    }

    static Stream<DynamicTest> tests(Object verification, Runnable afterEach) {
        invokeIfPresent(verification, "startPublisherExecutorService");
        return Arrays.stream(verification.getClass().getMethods())
            .filter(m -> Modifier.isPublic(m.getModifiers()) && m.getParameterCount() == 0)
            .filter(m -> m.getName().matches("(required|optional|stochastic|untested)_.*"))
            .sorted(Comparator.comparing(Method::getName))
            .map(m -> DynamicTest.dynamicTest(m.getName(), () -> run(verification, m, afterEach)))
            .onClose(() -> shutDownExecutor(verification));
    }

    /** Shuts the TCK's publisher executor down and waits for its thread to end, so the stray-thread check finds none. */
    private static void shutDownExecutor(Object verification) {
        invokeIfPresent(verification, "shutdownPublisherExecutorService");
        try {
            Object executor = verification.getClass().getMethod("publisherExecutorService").invoke(verification);
            if (executor instanceof java.util.concurrent.ExecutorService es && !es.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS)) {
                throw new IllegalStateException("the TCK's publisher executor did not stop within 10 s");
            }
        } catch (NoSuchMethodException e) {
            // this verification class has no executor
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("reading the TCK's publisher executor failed", e);
        }
    }

    private static void invokeIfPresent(Object verification, String name) {
        try {
            verification.getClass().getMethod(name).invoke(verification);
        } catch (NoSuchMethodException e) {
            // this verification class has no such lifecycle method
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("TCK lifecycle method " + name + " failed", e);
        }
    }

    private static void run(Object verification, Method m, Runnable afterEach) throws Throwable {
        try {
            verification.getClass().getMethod("setUp").invoke(verification);
            m.invoke(verification);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof SkipException skip) {
                Assumptions.abort("TCK skipped: " + skip.getMessage());
            }
            throw cause;
        } finally {
            afterEach.run();
        }
    }
}
