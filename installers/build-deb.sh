#!/usr/bin/env bash
# Builds the .deb of the headless engine: jpackage makes the application image (the launcher and a runtime
# trimmed to the modules Gantry uses), dpkg-deb packs it with the systemd unit, the configuration file and the
# maintainer scripts. Run by `mvn -Pinstallers ...` (installers/pom.xml), not by hand.
#
# Why not `jpackage --type deb`: on JDK 17 it installs everything under /opt/<name> and has no way to ship files
# elsewhere (/usr/bin/gantry, the unit, /etc/gantry/gantry.conf as a conffile kept across upgrades); files copied
# there by a maintainer script would be unknown to dpkg.
set -euo pipefail

jar="$1"            # headless/target/gantry.jar
version="$2"        # the project version, 0.1.0-SNAPSHOT
app_version="$3"    # digits only, for jpackage
deb_version="$4"    # 0.1.0~SNAPSHOT
target="$5"         # installers/target
java_home="$6"      # the JDK running Maven

jdeps="$java_home/bin/jdeps"
jpackage="$java_home/bin/jpackage"
for tool in "$jdeps" "$jpackage"; do
  [[ -x "$tool" ]] || { echo "build-deb: $tool is missing: the .deb needs a full JDK 17 (jdeps, jlink, jpackage); build without the package with -P '!installers'" >&2; exit 1; }
done
command -v dpkg-deb >/dev/null || { echo "build-deb: dpkg-deb is missing (install dpkg), or build without the package with -P '!installers'" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ -f "$jar" ]] || { echo "build-deb: $jar is missing: build headless first (mvn -Pinstallers -pl installers -am package)" >&2; exit 1; }

# The runtime gets the modules jdeps finds the jar using (read at every build, so a new dependency cannot leave
# one out: a list kept by hand once lacked jdk.httpserver, and the package's /metrics failed), plus what only
# reflection or a service reaches: the elliptic-curve ciphers TLS needs and the zip file system.
echo "build-deb: finding the modules gantry.jar uses (jdeps)"
modules="$("$jdeps" --ignore-missing-deps --print-module-deps --multi-release 17 -q "$jar")"
[[ "$modules" == java.base* ]] || { echo "build-deb: jdeps found no modules in $jar: '$modules'" >&2; exit 1; }
modules+=",jdk.crypto.ec,jdk.zipfs"
echo "build-deb: runtime modules: $modules"

rm -rf "$target/jpackage-input" "$target/app-image" "$target/deb-root"
mkdir -p "$target/jpackage-input" "$target/app-image"
cp "$jar" "$target/jpackage-input/gantry.jar"
"$jpackage" --type app-image --name gantry --app-version "$app_version" \
  --description "Gantry MySQL/MariaDB proxy" --vendor "Gantry" \
  --input "$target/jpackage-input" --main-jar gantry.jar --main-class io.gantry.cli.GantryCommand \
  --add-modules "$modules" --jlink-options "--strip-debug --no-man-pages --no-header-files --generate-cds-archive" \
  --java-options "-XX:+ExitOnOutOfMemoryError -Dfile.encoding=UTF-8" \
  --dest "$target/app-image"

root="$target/deb-root"
install -d "$root/usr/lib" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/gantry" \
  "$root/usr/share/doc/gantry/docs" "$root/DEBIAN"
cp -a "$target/app-image/gantry" "$root/usr/lib/gantry"
ln -s ../lib/gantry/bin/gantry "$root/usr/bin/gantry"
install -m 0644 "$here/src/deb/gantry.service" "$root/lib/systemd/system/gantry.service"
# The sample, but for one setting: epoll, whose sessions a take-over moves, so that systemctl reload drops no client.
conf_epoll="# The package sets epoll: systemctl reload (a take-over) moves every session of a Gantry on epoll, while\\
# those of one on io_uring end between two statements, as a drain ends them. io_uring costs less CPU per\\
# statement: choose it if you never reload.\\
socket-transport = epoll"
sed -e "s|^#socket-transport = auto\$|$conf_epoll|" "$here/../assets/gantry.conf" > "$target/gantry.conf"
grep -q '^socket-transport = epoll$' "$target/gantry.conf" || { echo "build-deb: no socket-transport line" >&2; exit 1; }
install -m 0644 "$target/gantry.conf" "$root/etc/gantry/gantry.conf"
install -m 0644 "$here/../README.md" "$root/usr/share/doc/gantry/README.md"
# The manual beside the front page, so that the README's relative links (docs/...) work where it is installed.
install -m 0644 "$here"/../docs/*.md "$root/usr/share/doc/gantry/docs/"
install -m 0644 "$here/src/deb/copyright" "$root/usr/share/doc/gantry/copyright"
for script in postinst prerm postrm; do
  install -m 0755 "$here/src/deb/DEBIAN/$script" "$root/DEBIAN/$script"
done
install -m 0644 "$here/src/deb/DEBIAN/conffiles" "$root/DEBIAN/conffiles"
size_kb="$(du -sk --exclude=DEBIAN "$root" | cut -f1)"
sed -e "s/@VERSION@/$deb_version/" -e "s/@SIZE@/$size_kb/" "$here/src/deb/DEBIAN/control" > "$root/DEBIAN/control"

deb="$target/gantry_${deb_version}_amd64.deb"
# xz level 1: 6 s instead of 30 s for the engine's package in every build, for 8 % more bytes (54 MB against 50).
dpkg-deb --root-owner-group -Zxz -z1 --build "$root" "$deb"
echo "build-deb: $deb ($(du -h "$deb" | cut -f1)), gantry $version"
