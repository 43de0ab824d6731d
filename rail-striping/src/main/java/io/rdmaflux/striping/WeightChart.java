package io.rdmaflux.striping;

import java.util.List;
import java.util.Locale;

/**
 * Renders a weight history ({@link StripingMetrics#weightHistory()}) as a self-contained HTML page
 * with an inline SVG line chart: one line per rail (its share, 0..1) over time in seconds, with
 * optional shaded intervals (e.g. while a rail was throttled, as in seed 000 Fig. 20). No
 * dependency, no script; the page opens in any browser.
 */
public final class WeightChart {
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

    private WeightChart() {
    }

    /** An interval to shade, in ns of the history's clock, with a label. */
    public record Shade(long fromNs, long toNs, String label) {
    }

    /**
     * @param title   shown above the chart (HTML-escaped here)
     * @param startNs clock time drawn as 0 s
     * @param endNs   clock time drawn at the right edge, {@code > startNs}
     * @throws IllegalArgumentException if {@code endNs <= startNs}
     */
    public static String html(String title, List<StripingMetrics.WeightSample> history, long startNs, long endNs, List<Shade> shades) {
        if (endNs <= startNs) {
            throw new IllegalArgumentException("endNs > startNs required but they were " + endNs + " and " + startNs);
        }
        int width = 900;
        int height = 400;
        int left = 60;
        int top = 20;
        int plotW = width - left - 20;
        int plotH = height - top - 50;
        double span = endNs - startNs;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            + "font-family='sans-serif' font-size='12'>%n", width, height));
        for (Shade s : shades) {
            double x0 = left + plotW * Math.max(0, s.fromNs() - startNs) / span;
            double x1 = left + plotW * Math.min(span, s.toNs() - startNs) / span;
            svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='#f4e3c1'/>"
                + "<text x='%.1f' y='%d'>%s</text>%n", x0, top, Math.max(0, x1 - x0), plotH, x0 + 5, top + 15, escape(s.label())));
        }
        svg.append(String.format(Locale.ROOT, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='black'/>%n",
            left, top, plotW, plotH));
        for (int i = 0; i <= 10; i++) {
            double y = top + plotH - plotH * i / 10.0;
            svg.append(String.format(Locale.ROOT, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
                + "<text x='%d' y='%.1f' text-anchor='end'>%.1f</text>%n", left, left + plotW, y, y, left - 5, y + 4, i / 10.0));
        }
        for (int i = 0; i <= 10; i++) {
            double x = left + plotW * i / 10.0;
            svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' text-anchor='middle'>%.3g s</text>%n",
                x, top + plotH + 18, span * i / 10.0 / 1e9));
        }
        int rails = history.isEmpty() ? 0 : history.get(0).shares().length;
        for (int rail = 0; rail < rails; rail++) {
            StringBuilder pts = new StringBuilder();
            double lastY = Double.NaN;
            for (StripingMetrics.WeightSample w : history) {
                double x = left + plotW * Math.min(span, Math.max(0, w.timeNs() - startNs)) / span;
                double y = top + plotH - plotH * w.shares()[rail];
                if (!Double.isNaN(lastY)) {
                    // a step: the weight holds until the next update
                    pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, lastY));
                }
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                lastY = y;
            }
            pts.append(String.format(Locale.ROOT, "%d,%.1f", left + plotW, lastY));
            String color = COLORS[rail % COLORS.length];
            svg.append(String.format(Locale.ROOT, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>%n", color, pts));
            svg.append(String.format(Locale.ROOT, "<text x='%d' y='%d' fill='%s'>rail %d share</text>%n",
                left + 10 + 110 * rail, top + plotH + 38, color, rail));
        }
        svg.append("</svg>\n");
        return "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>rdmaflux striping weights</title></head><body>\n<p>"
            + escape(title) + "</p>\n" + svg + "</body></html>\n";
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;");
    }
}
