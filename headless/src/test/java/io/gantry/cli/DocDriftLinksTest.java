package io.gantry.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every relative link of the manual resolves: README.md, docs/*.md, BENCHMARKS.md and the modules' README.md files
 * name files that exist, and an anchor ({@code page.md#section}) names a heading of its page by GitHub's rules. A page
 * renamed, a heading reworded or a section moved without its links fails here, each broken link named with its page
 * and line.
 */
class DocDriftLinksTest {

    /** A scheme (http:, https:, mailto:, file:): not a relative link. */
    private static final Pattern ABSOLUTE = Pattern.compile("^[a-zA-Z][a-zA-Z0-9+.-]*:");

    private final Map<Path, Set<String>> anchors = new HashMap<>();

    @Test
    void everyRelativeLinkNamesAFileThatExistsAndAHeadingOfIt() {
        Path root = ManualPages.root();
        List<String> broken = new ArrayList<>();
        List<Path> pages = pagesToCheck(root);
        int checked = 0;
        for (Path page : pages) {
            for (ManualPages.Link link : ManualPages.links(page)) {
                if (ABSOLUTE.matcher(link.target()).find()) {
                    continue;
                }
                checked++;
                String problem = problem(page, link.target());
                if (problem != null) {
                    broken.add(root.relativize(page) + ":" + link.line() + ": (" + link.target() + ") " + problem);
                }
            }
        }
        assertThat(checked).as("links found in %s", pages).isGreaterThan(50);
        assertThat(broken).as("broken relative links:\n  " + String.join("\n  ", broken)).isEmpty();
    }

    @Test
    void anchorsFollowGitHubsRules() {
        assertThat(ManualPages.slug("`gantry run`")).isEqualTo("gantry-run");
        assertThat(ManualPages.slug("Several instances (`--cluster`)")).isEqualTo("several-instances---cluster");
        assertThat(ManualPages.slug("The console's image")).isEqualTo("the-consoles-image");
        assertThat(ManualPages.slug("`CONNECTION_ID()`")).isEqualTo("connection_id");
        assertThat(ManualPages.slug("`gantry.upstream_servers`")).isEqualTo("gantryupstream_servers");
        assertThat(ManualPages.slug("Drain (SIGTERM)")).isEqualTo("drain-sigterm");
        assertThat(ManualPages.slug("Doors: what a stranger can reach")).isEqualTo("doors-what-a-stranger-can-reach");
    }

    private static List<Path> pagesToCheck(Path root) {
        List<Path> pages = new ArrayList<>(ManualPages.pages());
        pages.add(root.resolve("BENCHMARKS.md"));
        try (Stream<Path> modules = Files.list(root)) {
            modules.map(module -> module.resolve("README.md")).filter(Files::isRegularFile).sorted()
                    .forEach(pages::add);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return pages.stream().filter(Files::isRegularFile).distinct().toList();
    }

    /** What is wrong with a link of {@code page}, or null. */
    private String problem(Path page, String target) {
        int hash = target.indexOf('#');
        String file = URLDecoder.decode(hash < 0 ? target : target.substring(0, hash), StandardCharsets.UTF_8);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
            return "no such file: " + resolved;
        }
        if (anchor == null || anchor.isEmpty() || !resolved.getFileName().toString().endsWith(".md")) {
            return null;
        }
        Set<String> known = anchors.computeIfAbsent(resolved, ManualPages::anchors);
        return known.contains(anchor) ? null : "no heading of " + resolved.getFileName() + " has the anchor #" + anchor;
    }
}
