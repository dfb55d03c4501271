package io.gantry.console;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The console's lines: it reaches the engine only through the admin client, and the FX thread through one class. */
class ConsoleLayeringTest {

    /** The console's main classes only (target/classes), without scanning every jar for the package. */
    private static final JavaClasses CONSOLE = new ClassFileImporter()
            .importPath(Path.of("target", "classes"));

    @Test
    void theConsoleUsesNothingOfTheEngineButTheAdminClient() {
        // The engine's own io.gantry.admin (the socket's server side) is not the admin client's.
        DescribedPredicate<JavaClass> engine = JavaClass.Predicates.resideInAPackage("io.gantry..")
                .and(DescribedPredicate.not(JavaClass.Predicates.resideInAnyPackage("io.gantry.console..",
                        "io.gantry.admin.protocol..", "io.gantry.admin.client..")));
        noClasses().that().resideInAPackage("io.gantry.console..")
                .should().dependOnClassesThat(engine)
                .check(CONSOLE);
    }

    @Test
    void onlyTheEngineConnectionHoldsAnAdminClient() {
        noClasses().that().resideOutsideOfPackage("io.gantry.console.engine..")
                .and().doNotHaveFullyQualifiedName(ConsoleLauncher.class.getName())
                .should().dependOnClassesThat().haveFullyQualifiedName("io.gantry.admin.client.AdminClient")
                .check(CONSOLE);
    }

    @Test
    void onlyUiExecutorHopsOntoTheFxThread() {
        noClasses().that().doNotHaveFullyQualifiedName(io.gantry.console.ui.UiExecutor.class.getName())
                .should().callMethod(javafx.application.Platform.class, "runLater", Runnable.class)
                .check(CONSOLE);
    }

    @Test
    void viewModelsAndTheConnectionKnowNoSceneGraph() {
        noClasses().that().haveSimpleNameEndingWith("ViewModel").or().resideInAPackage("io.gantry.console.engine..")
                .should().dependOnClassesThat().resideInAnyPackage("javafx.scene..", "javafx.stage..",
                        "javafx.application..", "org.controlsfx..")
                .check(CONSOLE);
        noClasses().that().resideInAPackage("io.gantry.console.engine..")
                .should().dependOnClassesThat().resideInAPackage("javafx..")
                .check(CONSOLE);
    }
}
