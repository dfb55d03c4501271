package io.gantry.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine;

/**
 * The version printed by {@code gantry --version} and by every subcommand's {@code --version}: the project version
 * written into {@code io/gantry/cli/version.properties} by Maven resource filtering at build time (so it is right in
 * the jar and in tests alike), else the jar manifest's {@code Implementation-Version}.
 */
final class GantryVersion implements CommandLine.IVersionProvider {

    @Override
    public String[] getVersion() {
        return new String[] {"gantry " + version()};
    }

    static String version() {
        try (InputStream in = GantryVersion.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                Properties properties = new Properties();
                properties.load(in);
                String version = properties.getProperty("version", "");
                if (!version.isBlank() && !version.startsWith("${")) {
                    return version.strip();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the version resource", e);
        }
        String version = GantryVersion.class.getPackage().getImplementationVersion();
        return version == null ? "(version unknown: built without Maven resource filtering)" : version;
    }
}
