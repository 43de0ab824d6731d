package io.rdmaflux.striping;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.opentest4j.TestAbortedException;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.SkipException;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK against the {@link Rails#stripe} operator over subchannels that complete
 * every stripe at once (the TCK's rules are about signals, not about rails). Each TCK method runs as
 * a JUnit dynamic test.
 */
class RailsPublisherTckTest {

    /** Completes each stripe as soon as it is posted. */
    private static final class LoopbackRail implements RailSubchannel<Long> {
        private volatile RailSubchannel.StripeListener listener;
        private int rail;

        @Override
        public void start(int rail, StripeListener listener) {
            this.rail = rail;
            this.listener = listener;
        }

        @Override
        public void post(Stripe<Long> stripe) {
            StripeListener l = listener;
            if (l != null) {
                l.onStripeCompleted(rail, stripe.stripeId(), 0);
            }
        }

        @Override
        public void stop() {
            listener = null;
        }
    }

    private static Flux<Long> striped(Flux<Long> source) {
        RailsSpec spec = RailsSpec.rails(2).maxInFlightMessages(8).switchoverThresholdBytes(1024).stripeGranuleBytes(64);
        return source.transform(Rails.stripe(spec, List.of(new LoopbackRail(), new LoopbackRail()), i -> i % 2 == 0 ? 4096 : 100,
            () -> 0L));
    }

    @TestFactory
    Stream<DynamicTest> stripeIsAReactiveStreamsPublisher() {
        PublisherVerification<Long> v = new PublisherVerification<>(new TestEnvironment(1000, 200)) {
            @Override
            public Publisher<Long> createPublisher(long elements) {
                return striped(Flux.range(0, (int) elements).map(Long::valueOf));
            }

            @Override
            public Publisher<Long> createFailedPublisher() {
                return striped(Flux.error(new IllegalStateException("upstream failed")));
            }
        };
        return Arrays.stream(PublisherVerification.class.getMethods())
            .filter(m -> Modifier.isPublic(m.getModifiers()) && m.getParameterCount() == 0)
            .filter(m -> m.getName().matches("(required|optional|stochastic)_.*"))
            .sorted(Comparator.comparing(Method::getName))
            .map(m -> DynamicTest.dynamicTest(m.getName(), () -> run(v, m)));
    }

    private static void run(PublisherVerification<Long> v, Method m) throws Throwable {
        try {
            v.setUp();
            m.invoke(v);
        } catch (InvocationTargetException e) {
            if (e.getCause() instanceof SkipException skip) {
                throw new TestAbortedException(skip.getMessage());
            }
            throw e.getCause();
        }
    }
}
