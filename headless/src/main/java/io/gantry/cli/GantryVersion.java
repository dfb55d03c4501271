package io.gantry.cli;

import picocli.CommandLine;

/** The version printed by {@code gantry --version}, from the jar's manifest. */
final class GantryVersion implements CommandLine.IVersionProvider {

    @Override
    public String[] getVersion() {
        String version = GantryVersion.class.getPackage().getImplementationVersion();
        return new String[] {"gantry " + (version == null ? "(development build)" : version)};
    }
}
