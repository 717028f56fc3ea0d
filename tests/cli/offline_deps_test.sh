#!/bin/sh
# offline_deps_test.sh ROOT — tools/offline-deps env on a package made here (dpkg-deb):
# unpacked into the prefix only, its .pc prefix rewritten, the exports printed and
# usable by pkg-config; a system prefix refused; no .deb files an error.
set -eu
root=$1
command -v dpkg-deb >/dev/null || { echo "no dpkg-deb: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pkg=$tmp/pkg
mkdir -p "$pkg/DEBIAN" "$pkg/usr/lib/x86_64-linux-gnu/pkgconfig" "$pkg/usr/include"
printf 'Package: sfc-fake\nVersion: 1\nArchitecture: all\nMaintainer: sfc tests\nDescription: test\n' \
  >"$pkg/DEBIAN/control"
printf 'prefix=/usr\nincludedir=${prefix}/include\nlibdir=/usr/lib/x86_64-linux-gnu\n\nName: sfcfake\nDescription: t\nVersion: 1\nCflags: -I${includedir}/sfcfake\nLibs: -L${libdir} -lsfcfake\n' \
  >"$pkg/usr/lib/x86_64-linux-gnu/pkgconfig/sfcfake.pc"
echo '/* fake */' >"$pkg/usr/include/sfcfake.h"
mkdir "$tmp/debs"
dpkg-deb --build "$pkg" "$tmp/debs/sfc-fake_1_all.deb" >/dev/null
prefix=$tmp/prefix
out=$("$root/tools/offline-deps" env "$tmp/debs" "$prefix")
test -f "$prefix/usr/include/sfcfake.h"
grep -q "^prefix=$prefix/usr$" "$prefix/usr/lib/x86_64-linux-gnu/pkgconfig/sfcfake.pc"
grep -q "^libdir=$prefix/usr/lib/x86_64-linux-gnu$" "$prefix/usr/lib/x86_64-linux-gnu/pkgconfig/sfcfake.pc"
echo "$out" | grep -q "^export CMAKE_PREFIX_PATH=$prefix/usr"
eval "$out"
if command -v pkg-config >/dev/null; then
  test "$(pkg-config --cflags sfcfake | sed 's/ *$//')" = "-I$prefix/usr/include/sfcfake"
fi
# a system prefix is refused, and nothing is unpacked there
if "$root/tools/offline-deps" env "$tmp/debs" /usr 2>"$tmp/err"; then exit 1; fi
grep -q "refusing to unpack into /usr" "$tmp/err"
mkdir "$tmp/empty"
if "$root/tools/offline-deps" env "$tmp/empty" "$tmp/p2" 2>"$tmp/err"; then exit 1; fi
grep -q "no .deb files" "$tmp/err"
echo "offline-deps: ok"
