package io.gantry.console;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DesktopFailureTest {

    @Test
    void aMissingGtkIsNamedWithTheDebianPackageThatBringsIt() {
        RuntimeException launch = new RuntimeException("Exception in Application start method",
                new UnsupportedOperationException("Unable to load glass GTK library."));
        assertThat(DesktopFailure.explain(launch, ":0", "")).hasValue("GTK 3 is missing: JavaFX needs libgtk-3.so.0 to "
                + "open a window on Linux; on Debian or Ubuntu install the package libgtk-3-0 (sudo apt install "
                + "libgtk-3-0)");
    }

    @Test
    void aDisplayThatCannotBeOpenedIsNamed() {
        assertThat(DesktopFailure.explain(new UnsupportedOperationException("Unable to open DISPLAY"), ":97", ""))
                .hasValue("cannot open the display ':97' (is its X server running, and may this user connect to it? "
                        + "see DISPLAY and XAUTHORITY)");
    }

    @Test
    void aMissingLibraryOfGlassIsNamedWithItsPackage() {
        UnsatisfiedLinkError link = new UnsatisfiedLinkError("/root/.openjfx/cache/21.0.11/amd64/libglassgtk3.so: "
                + "libXtst.so.6: cannot open shared object file: No such file or directory");
        assertThat(DesktopFailure.explain(link, ":0", "")).hasValue("libXtst.so.6 cannot be loaded, and JavaFX needs "
                + "it to open a window; on Debian or Ubuntu install the package libxtst6 (sudo apt install libxtst6)");
        assertThat(DesktopFailure.explain(new UnsatisfiedLinkError("libfoo.so.3: cannot open shared object file"),
                ":0", "")).hasValue("libfoo.so.3 cannot be loaded, and JavaFX needs it to open a window; install the "
                + "package of your distribution that has it");
    }

    @Test
    void whenOnlyJavaFxsPrintedLineNamesTheLibraryThatLineIsRead() {
        RuntimeException launch = new RuntimeException(new UnsatisfiedLinkError(
                "no glassgtk3 in java.library.path: /usr/java/packages/lib:/usr/lib64:/lib64:/lib:/usr/lib"));
        String printed = "Loading library glassgtk3 from resource failed: java.lang.UnsatisfiedLinkError: "
                + "/root/.openjfx/cache/21.0.11+4/amd64/libglassgtk3.so: libXxf86vm.so.1: cannot open shared object "
                + "file: No such file or directory\njava.lang.UnsatisfiedLinkError: ...\n\tat java.base/...\n";
        assertThat(DesktopFailure.explain(launch, ":0", printed)).hasValue("libXxf86vm.so.1 cannot be loaded, and "
                + "JavaFX needs it to open a window; on Debian or Ubuntu install the package libxxf86vm1 (sudo apt "
                + "install libxxf86vm1)");
    }

    @Test
    void theConsolesOwnFailuresAreNotExplainedAway() {
        assertThat(DesktopFailure.explain(new IllegalStateException("Toolkit already initialized"), ":0", ""))
                .isEmpty();
        assertThat(DesktopFailure.explain(new RuntimeException(new NullPointerException()), ":0", "")).isEmpty();
        assertThat(DesktopFailure.explain(new UnsatisfiedLinkError("no glass in java.library.path"), ":0", ""))
                .isEmpty();
    }

    @Test
    void everyLibraryHasADebianPackage() {
        assertThat(DesktopFailure.PACKAGES).containsEntry("libgtk-3.so.0", "libgtk-3-0 | libgtk-3-0t64")
                .containsEntry("libXtst.so.6", "libxtst6").containsEntry("libGL.so.1", "libgl1")
                .allSatisfy((library, debian) -> assertThat(debian).matches("[a-z0-9.+-]+( \\| [a-z0-9.+-]+)*"));
    }
}
