package io.rdmaflux.striping;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class WeightChartTest {
    @Test
    void rendersOneStepLinePerRailAndTheShadedIntervals() {
        List<StripingMetrics.WeightSample> h = List.of(new StripingMetrics.WeightSample(0, new double[] {0.5, 0.5}),
            new StripingMetrics.WeightSample(500, new double[] {0.8, 0.2}));
        String html = WeightChart.html("a <b> & c", h, 0, 1000, List.of(new WeightChart.Shade(200, 600, "throttled")));
        assertEquals(2, html.split("<polyline").length - 1);
        assertTrue(html.contains("throttled"));
        assertTrue(html.contains("a &lt;b&gt; &amp; c"));
        // rail 0 steps from 0.5 to 0.8 at the middle: y = 20 + 330 - 330 * share
        assertTrue(html.contains("470.0,185.0 470.0,86.0"), html);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> WeightChart.html("t", h, 5, 5, List.of()));
        assertTrue(e.getMessage().contains("endNs > startNs required"), e.getMessage());
    }
}
