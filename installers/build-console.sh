#!/usr/bin/env bash
# Builds the console's application image for a Linux desktop: jpackage makes the `gantry-console` launcher and a
# Java runtime trimmed to the modules the console jar uses (JavaFX's own classes and native libraries are in the
# jar), packed as a .tar.gz that runs wherever it is unpacked, without an installed Java. Run by the installers
# profile (installers/pom.xml), after build-deb.sh.
set -euo pipefail

jar="$1"            # console-ui/target/gantry-console.jar
app_version="$2"    # digits only, for jpackage
version="$3"        # the project version, 0.1.0-SNAPSHOT
target="$4"         # installers/target
java_home="$5"      # the JDK running Maven

[[ -f "$jar" ]] || { echo "build-console: $jar is missing: build console-ui first (mvn -pl installers -am package)" >&2; exit 1; }
jdeps="$java_home/bin/jdeps"
jpackage="$java_home/bin/jpackage"
for tool in "$jdeps" "$jpackage"; do
  [[ -x "$tool" ]] || { echo "build-console: $tool is missing: the image needs a full JDK 17" >&2; exit 1; }
done

modules="$("$jdeps" --ignore-missing-deps --print-module-deps --multi-release 17 -q "$jar")"
[[ "$modules" == java.base* ]] || { echo "build-console: jdeps found no modules in $jar: '$modules'" >&2; exit 1; }
echo "build-console: runtime modules: $modules"

rm -rf "$target/console-input" "$target/console-image"
mkdir -p "$target/console-input" "$target/console-image"
cp "$jar" "$target/console-input/gantry-console.jar"
"$jpackage" --type app-image --name gantry-console --app-version "$app_version" \
  --description "Gantry desktop console" --vendor "Gantry" \
  --input "$target/console-input" --main-jar gantry-console.jar --main-class io.gantry.console.ConsoleLauncher \
  --add-modules "$modules" --jlink-options "--strip-debug --no-man-pages --no-header-files --generate-cds-archive" \
  --dest "$target/console-image"

archive="$target/gantry-console-${version}-linux-x64.tar.gz"
tar -C "$target/console-image" -czf "$archive" gantry-console
echo "build-console: $archive ($(du -h "$archive" | cut -f1))"
