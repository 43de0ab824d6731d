package io.rdmaflux.samples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes a self-contained HTML report with two inline SVG charts: throughput over time and each
 * rail's share of the bytes over time (the weights the striping policy converged to, as observed
 * on the wire).
 */
final class ReportWriter {
    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
    private static final int W = 720;
    private static final int H = 240;
    private static final int PAD = 48;

    private ReportWriter() {
    }

    /** One chart series: a name and (x, y) points. */
    record Series(String name, double[] x, double[] y) {
    }

    /**
     * Writes {@code <dir>/<prefix>-<timestamp>.html}.
     *
     * @return the file written
     * @throws UserError if the directory cannot be created or written
     */
    static Path write(Path dir, String prefix, String title, List<String> summaryLines, List<Sampler.Sample> samples, int rails) {
        List<Series> throughput = new ArrayList<>();
        List<Series> shares = new ArrayList<>();
        int n = Math.max(0, samples.size() - 1);
        double[] t = new double[n];
        double[] mibps = new double[n];
        double[][] share = new double[rails][n];
        for (int i = 1; i < samples.size(); i++) {
            Sampler.Sample a = samples.get(i - 1);
            Sampler.Sample b = samples.get(i);
            double dt = (b.timeNs() - a.timeNs()) / 1e9;
            t[i - 1] = b.timeNs() / 1e9;
            mibps[i - 1] = dt > 0 ? (b.receivedBytes() - a.receivedBytes()) / dt / (1 << 20) : 0;
            long sum = 0;
            for (int r = 0; r < rails; r++) {
                sum += b.railBytes()[r] - a.railBytes()[r];
            }
            for (int r = 0; r < rails; r++) {
                double prev = i > 1 ? share[r][i - 2] : 1.0 / rails;
                share[r][i - 1] = sum > 0 ? (double) (b.railBytes()[r] - a.railBytes()[r]) / sum : prev;
            }
        }
        throughput.add(new Series("received MiB/s", t, mibps));
        for (int r = 0; r < rails; r++) {
            shares.add(new Series("rail " + r, t, share[r]));
        }
        StringBuilder html = new StringBuilder(16 * 1024);
        html.append("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>").append(esc(title)).append("</title>\n")
            .append("<style>body{font-family:sans-serif;margin:2em;max-width:800px}pre{background:#f6f6f6;padding:1em}"
                + "svg{background:#fff;border:1px solid #ddd}</style></head><body>\n")
            .append("<h1>").append(esc(title)).append("</h1>\n<pre>");
        for (String line : summaryLines) {
            html.append(esc(line)).append('\n');
        }
        html.append("</pre>\n<h2>Throughput over time</h2>\n").append(chart(throughput, "MiB/s", false))
            .append("<h2>Rail shares over time (observed weights)</h2>\n").append(chart(shares, "share of bytes", true))
            .append("<p>Samples every 100 ms; a share is the rail's fraction of the bytes completed in that interval.</p>\n")
            .append("</body></html>\n");
        try {
            Files.createDirectories(dir);
            String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss-SSS"));
            Path file = dir.resolve(prefix + "-" + stamp + ".html");
            Files.writeString(file, html, StandardCharsets.UTF_8);
            return file;
        } catch (IOException e) {
            throw new UserError("cannot write the report under " + dir + ": " + e.getMessage() + "; pass --report-dir with a writable directory");
        }
    }

    private static String chart(List<Series> series, String yLabel, boolean unitRange) {
        double xMax = 1e-9;
        double yMax = unitRange ? 1.0 : 1e-9;
        for (Series s : series) {
            for (double x : s.x()) {
                xMax = Math.max(xMax, x);
            }
            if (!unitRange) {
                for (double y : s.y()) {
                    yMax = Math.max(yMax, y);
                }
            }
        }
        yMax = unitRange ? 1.0 : yMax * 1.1;
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n", W, H + 30));
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>", PAD, H - PAD / 2, W - 10, H - PAD / 2));
        svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"10\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", PAD, PAD, H - PAD / 2));
        for (int k = 0; k <= 4; k++) {
            double yv = yMax * k / 4;
            double py = py(yv, yMax);
            svg.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%.1f\" font-size=\"10\">%s</text>", py + 3, fmt(yv)));
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n", PAD, py, W - 10, py));
            double xv = xMax * k / 4;
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%s s</text>\n", px(xv, xMax) - 8, H - 8, fmt(xv)));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"10\" font-size=\"11\">%s</text>\n", PAD + 6, esc(yLabel)));
        for (int i = 0; i < series.size(); i++) {
            Series s = series.get(i);
            String color = COLORS[i % COLORS.length];
            StringBuilder pts = new StringBuilder();
            for (int j = 0; j < s.x().length; j++) {
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", px(s.x()[j], xMax), py(s.y()[j], yMax)));
            }
            svg.append("<polyline fill=\"none\" stroke-width=\"2\" stroke=\"").append(color).append("\" points=\"").append(pts).append("\"/>\n");
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"%s\">%s</text>\n",
                PAD + 10 + 110 * i, H + 20, color, esc(s.name())));
        }
        return svg.append("</svg>\n").toString();
    }

    private static double px(double x, double xMax) {
        return PAD + (W - 10 - PAD) * x / xMax;
    }

    private static double py(double y, double yMax) {
        return (H - PAD / 2.0) - (H - PAD / 2.0 - 10) * y / yMax;
    }

    private static String fmt(double v) {
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
