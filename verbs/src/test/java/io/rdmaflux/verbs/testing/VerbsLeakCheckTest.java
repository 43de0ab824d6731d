package io.rdmaflux.verbs.testing;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@link VerbsLeakCheck}'s grace: the default, the {@value VerbsLeakCheck#GRACE_PROPERTY} property and its bad values. */
class VerbsLeakCheckTest {
    private String propertyBefore;

    @BeforeEach
    void rememberProperty() {
        propertyBefore = System.getProperty(VerbsLeakCheck.GRACE_PROPERTY);
        System.clearProperty(VerbsLeakCheck.GRACE_PROPERTY);
    }

    @AfterEach
    void restoreProperty() {
        if (propertyBefore == null) {
            System.clearProperty(VerbsLeakCheck.GRACE_PROPERTY);
        } else {
            System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, propertyBefore);
        }
    }

    @Test
    void graceIsTenSecondsWhenThePropertyIsUnset() {
        assertEquals(10_000, VerbsLeakCheck.begin().graceMs());
    }

    @Test
    void graceIsFixedWhenTheCheckBegins() {
        System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, " 200 ");
        VerbsLeakCheck shortGrace = VerbsLeakCheck.begin();
        System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, "0");

        assertEquals(200, shortGrace.graceMs());
        assertEquals(0, VerbsLeakCheck.begin().graceMs());
    }

    @Test
    void aStrayThreadFailsAfterTheConfiguredGraceNamingIt() throws InterruptedException {
        System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, "0");
        VerbsLeakCheck check = VerbsLeakCheck.begin();
        CountDownLatch release = new CountDownLatch(1);
        Thread stray = new Thread(() -> awaitQuietly(release), "rdmaflux-stray-verbs-check");
        stray.setDaemon(true);
        stray.start();
        try {
            AssertionError e = assertThrows(AssertionError.class, check::assertNoThreadsAdded);
            assertEquals("stray threads still running after 0 ms: [rdmaflux-stray-verbs-check (daemon)]", e.getMessage());
        } finally {
            release.countDown();
            stray.join();
        }
    }

    @Test
    void negativeGraceFailsNamingTheValueAndTheFix() {
        assertBadGrace("-1");
    }

    @Test
    void nonNumericGraceFailsNamingTheValueAndTheFix() {
        assertBadGrace("10s");
    }

    @Test
    void graceAboveADayFailsNamingTheValueAndTheFix() {
        assertBadGrace("86400001");
    }

    private static void assertBadGrace(String value) {
        System.setProperty(VerbsLeakCheck.GRACE_PROPERTY, value);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, VerbsLeakCheck::begin);
        assertEquals("rdmaflux.test.threadGraceMs must be a whole number of milliseconds from 0 to 86400000 but it was '" + value
            + "'; set it to e.g. 200, or clear it for the default 10000", e.getMessage());
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
