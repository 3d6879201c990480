#!/bin/sh
# install-extension.sh DEST [SUITE PACKAGE VERSION SHA256]: lay out a PostgreSQL extension from Debian's
# package of it (e.g. postgresql-17-pgvector) under DEST in the npm server's layout (DEST/lib/postgresql/*.so,
# DEST/share/postgresql/extension/*), to be copied over /opt/postgres. Without PACKAGE it makes DEST empty
# (the plain server images have no extension).
#   SUITE: the Debian suite that ships the package (added to apt's sources for the download only when it is
#   not the image's own); VERSION and SHA256: the pin from dbexp/catalog/catalog.py: the .deb is checked
#   against the SHA256 before anything is unpacked. Only the extension's files are kept (dpkg -x, no
#   dependencies installed: the server is the npm build's, not Debian's).
# A failure it can name is one line starting "dbexp-build-error: " (the lab shows that line).
set -eu
dest=$1
suite=${2:-} pkg=${3:-} version=${4:-} sha=${5:-}
PIN_HOME=dbexp/catalog/catalog.py
fail() { echo "dbexp-build-error: $*"; exit 1; }

mkdir -p "$dest/lib/postgresql" "$dest/share/postgresql/extension"
[ -n "$pkg" ] || exit 0
[ -n "$version" ] && [ -n "$sha" ] || fail "extension $pkg needs a pinned version and SHA256 in $PIN_HOME"

export DEBIAN_FRONTEND=noninteractive
# the image's mirror, from a one-line sources.list or a deb822 debian.sources
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
         | sed -n 's/^deb \([a-z]*:[^ ]*\) .*/\1/p; s/^URIs: *\([^ ]*\).*/\1/p' | head -n 1)
[ -n "$mirror" ] || fail "no Debian mirror in the image's apt sources"
# (a suite the image already has is listed twice: apt only warns)
echo "deb $mirror $suite main" > /etc/apt/sources.list.d/dbexp-extension.list
apt-get update -qq || fail "apt-get update failed inside the image (see the lines above)"
if ! apt-cache show "$pkg=$version" 2>/dev/null | grep -q '^Package:'; then
    have=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
    fail "$pkg $version is not on the mirror's $suite (it has ${have:-none}): pin what it has in $PIN_HOME"
fi
work=$(mktemp -d)
chmod 755 "$work"
chown _apt "$work" 2>/dev/null || true
cd "$work"
apt-get download -q "$pkg=$version"
deb=$(ls ./*.deb)
got=$(sha256sum "$deb" | cut -d' ' -f1)
[ "$got" = "$sha" ] || fail "${deb#./} has SHA256 $got, not the pinned $sha ($PIN_HOME)"
echo "dbexp: ${deb#./}: SHA256 $got matches the pin"
dpkg -x "$deb" "$work/root"
n=0
for so in "$work"/root/usr/lib/postgresql/*/lib/*.so; do
    [ -f "$so" ] || continue
    cp "$so" "$dest/lib/postgresql/"; n=$((n + 1))
done
for f in "$work"/root/usr/share/postgresql/*/extension/*; do
    [ -f "$f" ] || continue
    cp "$f" "$dest/share/postgresql/extension/"
done
[ "$n" -gt 0 ] || fail "$pkg $version holds no server module (usr/lib/postgresql/*/lib/*.so)"
chmod -R a+rX "$dest"
rm -f /etc/apt/sources.list.d/dbexp-extension.list
cd /
rm -rf "$work" /var/lib/apt/lists/*
echo "dbexp: extension $pkg $version laid out ($n module(s))"
