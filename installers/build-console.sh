#!/usr/bin/env bash
# Builds the console's application image for a Linux desktop: jpackage makes the `gantry-console` launcher and a
# Java runtime trimmed to the modules the console jar uses (JavaFX's own classes and native libraries are in the
# jar), packed as a .tar.gz that runs wherever it is unpacked, without an installed Java, and as a .deb that depends
# on the desktop libraries JavaFX links (the jar's io/gantry/console/desktop-libraries.properties). Run by the
# installers profile (installers/pom.xml), after build-deb.sh.
set -euo pipefail

jar="$1"            # console-ui/target/gantry-console.jar
app_version="$2"    # digits only, for jpackage
version="$3"        # the project version, 0.1.0-SNAPSHOT
target="$4"         # installers/target
java_home="$5"      # the JDK running Maven
deb_version="$6"    # 0.1.0~SNAPSHOT

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

# The .deb: the same image in /usr/lib/gantry-console, and Depends: the packages of the libraries JavaFX's natives
# link, one entry per package ("a | b" where Debian renamed it), as the console's own table names them.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
table="$target/console-input/io/gantry/console/desktop-libraries.properties"
(cd "$target/console-input" && "$java_home/bin/jar" xf gantry-console.jar io/gantry/console/desktop-libraries.properties)
depends="$(grep -v '^#' "$table" | grep '=' \
  | sed -e 's/^[^=]*= *//' -e 's/ *$//' | sort -u | paste -sd, - | sed 's/,/, /g')"
[[ "$depends" == *libgtk-3-0* ]] || { echo "build-console: no desktop libraries in $jar: '$depends'" >&2; exit 1; }
root="$target/console-deb-root"
rm -rf "$root"
install -d "$root/usr/lib" "$root/usr/bin" "$root/usr/share/doc/gantry-console" "$root/DEBIAN"
cp -a "$target/console-image/gantry-console" "$root/usr/lib/gantry-console"
ln -s ../lib/gantry-console/bin/gantry-console "$root/usr/bin/gantry-console"
install -m 0644 "$here/src/deb-console/copyright" "$root/usr/share/doc/gantry-console/copyright"
size_kb="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
sed -e "s/@VERSION@/$deb_version/" -e "s/@SIZE@/$size_kb/" -e "s/@DEPENDS@/$depends/" \
  "$here/src/deb-console/DEBIAN/control" > "$root/DEBIAN/control"
deb="$target/gantry-console_${deb_version}_amd64.deb"
# xz level 1, not the default 6, as for the engine's package (6 s against 30 s there), in every build: 9 % more
# bytes here (40.5 MB against 37.0).
dpkg-deb --root-owner-group -Zxz -z1 --build "$root" "$deb"
echo "build-console: $deb ($(du -h "$deb" | cut -f1)), Depends: $depends"
