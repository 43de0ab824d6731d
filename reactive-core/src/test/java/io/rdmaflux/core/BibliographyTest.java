package io.rdmaflux.core;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every seed-paper citation in the main sources ({@code seed 00N &sect;x.y}, {@code seed 00N eq. n},
 * {@code seed 00N Fig. n}, also written with a literal section sign, chained as in
 * {@code seed 000 &sect;4.3, &sect;5.3} or {@code seed 004 &sect;II-B and &sect;III-C}, and
 * {@code eq. 4 of seed 000}) has a row in the citation table of BIBLIOGRAPHY.md at the repository root,
 * where each row names the paper's section, equation or figure. Scans every module's
 * {@code src/main} {@code *.java} and {@code *.kt}; no Maven module needs to be built.
 */
class BibliographyTest {
    private static final String SECT = "(?:\u00a7|&sect;)";
    private static final String DASH = "(?:-|\u2013|&ndash;)";
    private static final String SEC = SECT + "\\s*(?:[0-9]+(?:\\.[0-9]+)*(?:\\s*" + DASH + "\\s*[0-9]+(?:\\.[0-9]+)*)?"
            + "|[IVX]+(?:-[A-H](?![A-Za-z]))?(?:\\s*(?:\u2013|&ndash;)\\s*[IVX]+(?:-[A-H](?![A-Za-z]))?)?)";
    private static final String EQ = "eqs?\\.\\s*[0-9]+(?:\\s*" + DASH + "\\s*[0-9]+)?";
    private static final String FIG = "Figs?\\.\\s*[0-9]+";
    private static final String REF = "(?:" + SEC + "|" + EQ + "|" + FIG + ")";
    /** White space, possibly a line break into the next line of a comment. */
    private static final String CONT = "(?:\\s*(?:\\*|//)?\\s*)";
    private static final String SEP = CONT + "(?:(?:,|/|\\band\\b|\\()" + CONT + ")?";
    private static final Pattern CITATION = Pattern.compile(
            "\\bseeds?" + CONT + "(00[0-9])(?:'s)?" + CONT + "(" + REF + "(?:" + SEP + REF + ")*)",
            Pattern.CASE_INSENSITIVE);
    private static final Pattern CITATION_REVERSED = Pattern.compile(
            "(" + REF + ")\\s+of" + CONT + "seed" + CONT + "(00[0-9])", Pattern.CASE_INSENSITIVE);
    private static final Pattern ONE_REF = Pattern.compile(REF, Pattern.CASE_INSENSITIVE);
    /** A table row of BIBLIOGRAPHY.md: {@code | seed 000 §5.3 | title | classes |}. */
    private static final Pattern ROW = Pattern.compile("^\\|\\s*`?seed (00[0-9]) ([^|`]+?)`?\\s*\\|");

    private record Citation(String seed, String ref, String where) {
        String key() {
            return "seed " + seed + " " + ref;
        }
    }

    /** One spelling per citation: section sign, en dash for ranges, "eq. n", "Fig. n". */
    static String normalize(String ref) {
        String r = ref.replace("&sect;", "\u00a7").replace("&ndash;", "\u2013");
        r = r.replaceAll("\\s+", " ");
        r = r.replaceAll("\u00a7\\s*", "\u00a7");
        r = r.replaceAll("(?<=[0-9])\\s*-\\s*(?=[0-9])", "\u2013");
        r = r.replaceAll("\\s*\u2013\\s*", "\u2013");
        r = r.replaceAll("(?i)^eqs?\\.\\s*", "eq. ");
        r = r.replaceAll("(?i)^figs?\\.\\s*", "Fig. ");
        return r.trim();
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            if (Files.isDirectory(d.resolve(".mvn")) && Files.isRegularFile(d.resolve("pom.xml"))) {
                return d;
            }
        }
        throw new IllegalStateException("no repository root (a directory with .mvn/ and pom.xml) above " + dir);
    }

    static List<Path> mainSources(Path root) throws IOException {
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                boolean srcTest = name.equals("test") && dir.getParent() != null
                        && dir.getParent().getFileName().toString().equals("src");
                boolean skip = !dir.equals(root) && (name.equals("target") || name.startsWith(".")
                        || name.equals("node_modules") || srcTest);
                return skip ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                String rel = root.relativize(file).toString().replace('\\', '/');
                if ((rel.endsWith(".java") || rel.endsWith(".kt")) && rel.contains("/src/main/")) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return files;
    }

    static List<Citation> citations(Path root, Path file) throws IOException {
        String text = Files.readString(file, StandardCharsets.UTF_8);
        String rel = root.relativize(file).toString().replace('\\', '/');
        List<Citation> found = new ArrayList<>();
        Matcher m = CITATION.matcher(text);
        while (m.find()) {
            Matcher r = ONE_REF.matcher(m.group(2));
            while (r.find()) {
                found.add(new Citation(m.group(1), normalize(r.group()), rel + ":" + line(text, m.start(2) + r.start())));
            }
        }
        Matcher rev = CITATION_REVERSED.matcher(text);
        while (rev.find()) {
            found.add(new Citation(rev.group(2), normalize(rev.group(1)), rel + ":" + line(text, rev.start())));
        }
        return found;
    }

    private static int line(String text, int offset) {
        int n = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                n++;
            }
        }
        return n;
    }

    static Set<String> tableRows(Path bibliography) throws IOException {
        Set<String> rows = new HashSet<>();
        for (String l : Files.readAllLines(bibliography, StandardCharsets.UTF_8)) {
            Matcher m = ROW.matcher(l);
            if (m.find()) {
                rows.add("seed " + m.group(1) + " " + normalize(m.group(2)));
            }
        }
        return rows;
    }

    @Test
    void everyCitationInMainSourcesHasARowInBibliography() throws IOException {
        Path root = repositoryRoot();
        Path bibliography = root.resolve("BIBLIOGRAPHY.md");
        assertTrue(Files.isRegularFile(bibliography), "missing " + bibliography);
        Set<String> rows = tableRows(bibliography);
        assertTrue(rows.size() > 10, "BIBLIOGRAPHY.md has no citation table rows (| seed 00N §x | ... |): " + rows);

        List<Path> sources = mainSources(root);
        assertTrue(sources.size() > 50, "found only " + sources.size() + " main sources under " + root);
        List<String> missing = new ArrayList<>();
        int total = 0;
        for (Path f : sources) {
            for (Citation c : citations(root, f)) {
                total++;
                if (!rows.contains(c.key())) {
                    missing.add(c.where() + ": " + c.key());
                }
            }
        }
        assertTrue(total > 50, "found only " + total + " citations: the pattern no longer matches the sources");
        if (!missing.isEmpty()) {
            fail(missing.size() + " citation(s) with no row in BIBLIOGRAPHY.md's table (check the section in the "
                    + "paper, then add a row or fix the citation):\n  " + String.join("\n  ", missing));
        }
    }

    @Test
    void patternReadsTheCitationForms() {
        assertTrue(normalize("&sect;4.4-4.5").equals("\u00a74.4\u20134.5"));
        assertTrue(normalize("\u00a7II-B").equals("\u00a7II-B"));
        assertTrue(normalize("eq. 1&ndash;4").equals("eq. 1\u20134"));
        String text = "x (seed 000 &sect;4.3, &sect;5.3) y seed\n * 001 &sect;3 (Fig. 2) and seed 004 \u00a7II-B and \u00a7III-C;"
                + " eq. 4 of\n * seed 000";
        List<String> refs = new ArrayList<>();
        Matcher m = CITATION.matcher(text);
        while (m.find()) {
            Matcher r = ONE_REF.matcher(m.group(2));
            while (r.find()) {
                refs.add(m.group(1) + " " + normalize(r.group()));
            }
        }
        Matcher rev = CITATION_REVERSED.matcher(text);
        while (rev.find()) {
            refs.add(rev.group(2) + " " + normalize(rev.group(1)));
        }
        assertTrue(refs.equals(List.of("000 \u00a74.3", "000 \u00a75.3", "001 \u00a73", "001 Fig. 2", "004 \u00a7II-B",
                "004 \u00a7III-C", "000 eq. 4")), refs.toString());
    }
}
