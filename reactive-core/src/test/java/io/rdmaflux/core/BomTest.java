package io.rdmaflux.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bom/pom.xml} lists every published module of the reactor (root {@code <modules>}): each module
 * whose pom does not set {@code maven.deploy.skip} and is not of {@code pom} packaging must be a managed
 * dependency of the BOM, with its test-jar too when the module builds one; the BOM has no parent (an
 * imported BOM would otherwise pass the parent's dependencyManagement to users) and the root's version.
 * Entries for modules that other branches add (the BOM lists them ahead) are allowed. No Maven module
 * needs to be built: the poms are read as XML.
 */
class BomTest {

    @Test
    void everyPublishedModuleOfTheReactorIsInTheBom() throws Exception {
        Path root = BibliographyTest.repositoryRoot();
        List<String> problems = check(root);
        assertTrue(problems.isEmpty(), () -> "bom/pom.xml is out of date with the reactor:\n  " + String.join("\n  ", problems));
    }

    @Test
    void aModuleMissingFromTheBomIsReported(@TempDir Path dir) throws Exception {
        Path root = fakeReactor(dir, "0.1.0-SNAPSHOT", "");
        List<String> problems = check(root);
        assertEquals(List.of(
            "module lib (io.rdmaflux:rdmaflux-lib) is published but not in bom/pom.xml; add it to its dependencyManagement",
            "module lib builds a test-jar but bom/pom.xml has no <type>test-jar</type> entry for rdmaflux-lib"), problems);
    }

    @Test
    void aBomWithAParentOrAnotherVersionIsReported(@TempDir Path dir) throws Exception {
        Path root = fakeReactor(dir, "0.0.9", "<parent><groupId>io.rdmaflux</groupId><artifactId>rdmaflux-parent</artifactId>"
            + "<version>0.1.0-SNAPSHOT</version></parent>");
        List<String> problems = check(root);
        assertTrue(problems.contains("bom/pom.xml has a <parent>: an imported BOM would hand the parent's dependencyManagement "
            + "to every user; make it parent-less"), problems::toString);
        assertTrue(problems.contains("bom/pom.xml has version 0.0.9 but the root pom 0.1.0-SNAPSHOT; set the same version"),
            problems::toString);
    }

    /** A root with modules lib (published, test-jar), tool (deploy skipped) and bom listing neither. */
    private static Path fakeReactor(Path dir, String bomVersion, String bomParent) throws IOException {
        write(dir.resolve("pom.xml"), "<project><groupId>io.rdmaflux</groupId><artifactId>rdmaflux-parent</artifactId>"
            + "<version>0.1.0-SNAPSHOT</version><modules><module>lib</module><module>tool</module><module>bom</module></modules></project>");
        write(dir.resolve("lib/pom.xml"), "<project><artifactId>rdmaflux-lib</artifactId><build><plugins><plugin>"
            + "<artifactId>maven-jar-plugin</artifactId><executions><execution><goals><goal>test-jar</goal></goals></execution>"
            + "</executions></plugin></plugins></build></project>");
        write(dir.resolve("tool/pom.xml"), "<project><artifactId>rdmaflux-tool</artifactId>"
            + "<properties><maven.deploy.skip>true</maven.deploy.skip></properties></project>");
        write(dir.resolve("bom/pom.xml"), "<project>" + bomParent + "<groupId>io.rdmaflux</groupId><artifactId>rdmaflux-bom</artifactId>"
            + "<version>" + bomVersion + "</version><packaging>pom</packaging><dependencyManagement><dependencies>"
            + "<dependency><groupId>io.rdmaflux</groupId><artifactId>rdmaflux-other</artifactId><version>${project.version}</version></dependency>"
            + "</dependencies></dependencyManagement></project>");
        return dir;
    }

    private static void write(Path file, String xml) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, xml);
    }

    /** What is wrong with {@code root/bom/pom.xml}, one line each with the fix; empty when nothing is. */
    static List<String> check(Path root) throws Exception {
        List<String> problems = new ArrayList<>();
        Element rootPom = parse(root.resolve("pom.xml"));
        Element bom = parse(root.resolve("bom/pom.xml"));
        String version = text(rootPom, "version");
        if (child(bom, "parent") != null) {
            problems.add("bom/pom.xml has a <parent>: an imported BOM would hand the parent's dependencyManagement "
                + "to every user; make it parent-less");
        }
        if (!version.equals(text(bom, "version"))) {
            problems.add("bom/pom.xml has version " + text(bom, "version") + " but the root pom " + version + "; set the same version");
        }
        Set<String> managed = new LinkedHashSet<>();
        Element dm = child(bom, "dependencyManagement");
        Element deps = dm == null ? null : child(dm, "dependencies");
        for (Element d : deps == null ? List.<Element>of() : children(deps, "dependency")) {
            String type = text(d, "type");
            String key = text(d, "groupId") + ":" + text(d, "artifactId") + (type.isEmpty() ? "" : ":" + type);
            if (!managed.add(key)) {
                problems.add("bom/pom.xml lists " + key + " twice; remove one");
            }
            if (!"${project.version}".equals(text(d, "version"))) {
                problems.add("bom/pom.xml gives " + key + " version '" + text(d, "version") + "'; use ${project.version}");
            }
        }
        for (Element m : children(child(rootPom, "modules"), "module")) {
            String module = m.getTextContent().trim();
            Element pom = parse(root.resolve(module).resolve("pom.xml"));
            String artifactId = text(pom, "artifactId");
            Element props = child(pom, "properties");
            boolean skipped = props != null && "true".equals(text(props, "maven.deploy.skip"));
            if (skipped || "pom".equals(text(pom, "packaging"))) {
                continue;
            }
            if (!managed.contains("io.rdmaflux:" + artifactId)) {
                problems.add("module " + module + " (io.rdmaflux:" + artifactId + ") is published but not in bom/pom.xml; "
                    + "add it to its dependencyManagement");
            }
            if (buildsTestJar(pom) && !managed.contains("io.rdmaflux:" + artifactId + ":test-jar")) {
                problems.add("module " + module + " builds a test-jar but bom/pom.xml has no <type>test-jar</type> entry for " + artifactId);
            }
        }
        return problems;
    }

    private static boolean buildsTestJar(Element pom) {
        NodeList goals = pom.getElementsByTagName("goal");
        for (int i = 0; i < goals.getLength(); i++) {
            if ("test-jar".equals(goals.item(i).getTextContent().trim())) {
                return true;
            }
        }
        return false;
    }

    private static Element parse(Path pom) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        Document doc = f.newDocumentBuilder().parse(pom.toFile());
        return doc.getDocumentElement();
    }

    private static Element child(Element parent, String name) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && name.equals(e.getTagName())) {
                return e;
            }
        }
        return null;
    }

    private static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && name.equals(e.getTagName())) {
                out.add(e);
            }
        }
        return out;
    }

    private static String text(Element parent, String name) {
        Element e = child(parent, name);
        return e == null ? "" : e.getTextContent().trim();
    }
}
