package io.gantry.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The manual (README.md and docs/*.md) as the doc-drift tests read it: its pages, their headings and the anchors
 * GitHub makes of them, the text of one section, and the links outside code. Markdown is read line by line, as
 * GitHub does for what matters here: fenced code blocks hold no headings and no links, and neither do code spans.
 */
final class ManualPages {

    private static final Pattern FENCE = Pattern.compile("^\\s{0,3}(```|~~~)");
    private static final Pattern HEADING = Pattern.compile("^\\s{0,3}(#{1,6})\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern CODE_SPAN = Pattern.compile("`+[^`]*`+");
    private static final Pattern INLINE_LINK = Pattern.compile("\\]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern REFERENCE_LINK = Pattern.compile("^\\s{0,3}\\[[^\\]]+\\]:\\s*<?([^\\s>]+)>?");
    private static final Pattern LINK_TEXT = Pattern.compile("!?\\[([^\\]]*)\\]\\([^)]*\\)");

    private ManualPages() {
    }

    /** A heading: its level (1 for {@code #}), its text, and the line it is on (1-based). */
    record Heading(int level, String text, int line) {
    }

    /** A link's target as written, and the line it is on (1-based). */
    record Link(String target, int line) {
    }

    /**
     * The repository's root: the first directory, from the module the tests run in upwards, that has a README.md, a
     * docs/README.md and a pom.xml.
     */
    static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        for (Path at = dir; at != null; at = at.getParent()) {
            if (Files.isRegularFile(at.resolve("README.md")) && Files.isRegularFile(at.resolve("docs/README.md"))
                    && Files.isRegularFile(at.resolve("pom.xml"))) {
                return at;
            }
        }
        throw new IllegalStateException("no repository root with README.md and docs/README.md above " + dir);
    }

    /** The pages the manual is made of: README.md, then every docs/*.md, by name. */
    static List<Path> pages() {
        Path root = root();
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        try (var docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    /** The lines of a page. */
    static List<String> lines(Path page) {
        try {
            return Files.readAllLines(page, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Whether each line is inside a fenced code block (the fence lines themselves count as inside). */
    static boolean[] inCode(List<String> lines) {
        boolean[] code = new boolean[lines.size()];
        String open = null;
        for (int i = 0; i < lines.size(); i++) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (fence.find()) {
                code[i] = true;
                if (open == null) {
                    open = fence.group(1);
                } else if (open.equals(fence.group(1))) {
                    open = null;
                }
                continue;
            }
            code[i] = open != null;
        }
        return code;
    }

    /** The headings of a page, outside code blocks. */
    static List<Heading> headings(Path page) {
        List<String> lines = lines(page);
        boolean[] code = inCode(lines);
        List<Heading> headings = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher heading = HEADING.matcher(lines.get(i));
            if (!code[i] && heading.matches()) {
                headings.add(new Heading(heading.group(1).length(), heading.group(2), i + 1));
            }
        }
        return headings;
    }

    /**
     * The anchors GitHub makes of a page's headings: the heading's text (a link's label for a link), lower case,
     * without anything but letters, digits, blanks, hyphens and underscores, each blank a hyphen; a repeated anchor
     * gets {@code -1}, {@code -2}, ...
     */
    static Set<String> anchors(Path page) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (Heading heading : headings(page)) {
            String slug = slug(heading.text());
            int times = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(times == 0 ? slug : slug + "-" + times);
        }
        return anchors;
    }

    /** GitHub's anchor of a heading's text. */
    static String slug(String headingText) {
        String text = LINK_TEXT.matcher(headingText).replaceAll("$1").strip().toLowerCase(Locale.ROOT);
        StringBuilder slug = new StringBuilder(text.length());
        text.codePoints().forEach(c -> {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                slug.appendCodePoint(c);
            } else if (c == ' ') {
                slug.append('-');
            }
        });
        return slug.toString();
    }

    /** The links of a page outside code blocks and code spans: inline links, images and reference definitions. */
    static List<Link> links(Path page) {
        List<String> lines = lines(page);
        boolean[] code = inCode(lines);
        List<Link> links = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (code[i]) {
                continue;
            }
            String text = CODE_SPAN.matcher(lines.get(i)).replaceAll("");
            Matcher inline = INLINE_LINK.matcher(text);
            while (inline.find()) {
                links.add(new Link(inline.group(1), i + 1));
            }
            Matcher reference = REFERENCE_LINK.matcher(text);
            if (reference.find()) {
                links.add(new Link(reference.group(1), i + 1));
            }
        }
        return links;
    }

    /**
     * The lines of the section a heading opens, up to the next heading of its level or a higher one, the heading
     * included; empty when the page has no such heading.
     */
    static List<String> section(Path page, String headingText) {
        List<String> lines = lines(page);
        List<Heading> headings = headings(page);
        for (int h = 0; h < headings.size(); h++) {
            Heading heading = headings.get(h);
            if (!heading.text().equals(headingText)) {
                continue;
            }
            int end = lines.size();
            for (int next = h + 1; next < headings.size(); next++) {
                if (headings.get(next).level() <= heading.level()) {
                    end = headings.get(next).line() - 1;
                    break;
                }
            }
            return lines.subList(heading.line() - 1, end);
        }
        return List.of();
    }
}
