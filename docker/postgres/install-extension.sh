#!/bin/sh
# install-extension.sh DEST [SUITE PACKAGE VERSION SHA256]: lay out a PostgreSQL extension under DEST in the
# npm server's layout (DEST/lib/postgresql/*.so, DEST/share/postgresql/extension/*), to be copied over the
# server's home. Without PACKAGE it makes DEST empty (the plain server images have no extension).
# Two kinds, named by the environment (build arguments of the same names):
#   EXTENSION_SOURCE empty: PACKAGE is Debian's package of the built module (e.g. postgresql-17-pgvector);
#     only the extension's files are kept (dpkg -x, no dependencies installed: the server is not Debian's).
#   EXTENSION_SOURCE a folder (NAME.c, NAME.control, NAME--V.sql; e.g. dbexp/chapters/buffer_pins/extension):
#     each NAME.c is compiled with gcc -O2 -fPIC -shared against the server headers of the same major as
#     SERVER_VERSION, from Debian's PACKAGE (postgresql-server-dev-NN: dpkg -x, usr/include/postgresql/NN/server)
#     or, where EXTENSION_ARCHIVE names a wheel in the build context, from its folder EXTENSION_MEMBER.
#   SUITE: the Debian suite that ships the package (added to apt's sources for the download only when it is
#   not the image's own); VERSION and SHA256: the pin from dbexp/catalog/catalog.py: the .deb (or the wheel) is
#   checked against the SHA256 before anything is unpacked.
# A failure it can name is one line starting "dbexp-build-error: " (the lab shows that line).
set -eu
dest=$1
suite=${2:-} pkg=${3:-} version=${4:-} sha=${5:-}
source_dir=${EXTENSION_SOURCE:-} archive=${EXTENSION_ARCHIVE:-} member=${EXTENSION_MEMBER:-}
here=$(pwd)
PIN_HOME=dbexp/catalog/catalog.py
fail() { echo "dbexp-build-error: $*"; exit 1; }

mkdir -p "$dest/lib/postgresql" "$dest/share/postgresql/extension"
[ -n "$pkg" ] || exit 0
[ -n "$version" ] && [ -n "$sha" ] || fail "extension $pkg needs a pinned version and SHA256 in $PIN_HOME"

export DEBIAN_FRONTEND=noninteractive
work=$(mktemp -d)
chmod 755 "$work"
chown _apt "$work" 2>/dev/null || true
cd "$work"

if [ -n "$archive" ]; then
    # server headers in a wheel (a zip) from the build context
    whl="$here/$archive"
    [ -f "$whl" ] || fail "$archive is not in the build context"
    got=$(sha256sum "$whl" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || fail "${archive##*/} has SHA256 $got, not the pinned $sha ($PIN_HOME)"
    echo "dbexp: ${archive##*/}: SHA256 $got matches the pin"
else
    # the image's mirror, from a one-line sources.list or a deb822 debian.sources
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
             | sed -n 's/^deb \([a-z]*:[^ ]*\) .*/\1/p; s/^URIs: *\([^ ]*\).*/\1/p' | head -n 1)
    [ -n "$mirror" ] || fail "no Debian mirror in the image's apt sources"
    # (a suite the image already has is listed twice: apt only warns)
    echo "deb $mirror $suite main" > /etc/apt/sources.list.d/dbexp-extension.list
    # the mirror's sid Release file can be past its Valid-Until date (see docker/base/suites/sid.sh): for this
    # download only, an expired one is accepted (its signature is still checked; the .deb against the pin)
    apt-get update -qq -o Acquire::Check-Valid-Until=false \
        || fail "apt-get update failed inside the image (see the lines above)"
    if ! apt-cache show "$pkg=$version" 2>/dev/null | grep -q '^Package:'; then
        have=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
        fail "$pkg $version is not on the mirror's $suite (it has ${have:-none}): pin what it has in $PIN_HOME"
    fi
    apt-get download -q "$pkg=$version"
    deb=$(ls ./*.deb)
    got=$(sha256sum "$deb" | cut -d' ' -f1)
    [ "$got" = "$sha" ] || fail "${deb#./} has SHA256 $got, not the pinned $sha ($PIN_HOME)"
    echo "dbexp: ${deb#./}: SHA256 $got matches the pin"
    dpkg -x "$deb" "$work/root"
    rm -f /etc/apt/sources.list.d/dbexp-extension.list
fi

n=0
if [ -z "$source_dir" ]; then
    # Debian's package of the built module
    for so in "$work"/root/usr/lib/postgresql/*/lib/*.so; do
        [ -f "$so" ] || continue
        cp "$so" "$dest/lib/postgresql/"; n=$((n + 1))
    done
    for f in "$work"/root/usr/share/postgresql/*/extension/*; do
        [ -f "$f" ] || continue
        cp "$f" "$dest/share/postgresql/extension/"
    done
    [ "$n" -gt 0 ] || fail "$pkg $version holds no server module (usr/lib/postgresql/*/lib/*.so)"
else
    src="$here/$source_dir"
    [ -d "$src" ] || fail "the extension source $source_dir is not in the build context"
    # the compiler (and unzip for a wheel), in this build stage only
    tools="gcc libc6-dev${archive:+ unzip}"
    apt-get update -qq || fail "apt-get update failed inside the image (see the lines above)"
    # shellcheck disable=SC2086  # a list of package names
    apt-get install -y -qq --no-install-recommends $tools >/dev/null \
        || fail "could not install $tools in the extension's build stage"
    if [ -n "$archive" ]; then
        unzip -q "$here/$archive" "$member/*" -d "$work/root" || fail "${archive##*/} has no folder $member"
        headers="$work/root/$member"
    else
        headers=$(ls -d "$work"/root/usr/include/postgresql/*/server 2>/dev/null | head -n 1)
        [ -n "$headers" ] || fail "$pkg $version holds no server headers (usr/include/postgresql/*/server)"
    fi
    [ -f "$headers/pg_config.h" ] || fail "no pg_config.h in the headers of $pkg $version"
    have=$(sed -n 's/^#define PG_VERSION "\(.*\)"$/\1/p' "$headers/pg_config.h")
    # the module must be built for the server's major (PG_MODULE_MAGIC refuses another): 19.0~rc1 -> 19
    [ "${have%%[.a-z]*}" = "${SERVER_VERSION%%[.~]*}" ] \
        || fail "$pkg $version has the headers of PostgreSQL $have, not of the server's major ($SERVER_VERSION)"
    for c in "$src"/*.c; do
        [ -f "$c" ] || continue
        name=$(basename "$c" .c)
        echo "dbexp: compiling $name.c against the headers of PostgreSQL $have ($pkg $version)"
        gcc -O2 -fPIC -shared -I"$headers" -o "$dest/lib/postgresql/$name.so" "$c" \
            || fail "$name.c did not compile against the headers of PostgreSQL $have (see the lines above)"
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || fail "the extension source $source_dir holds no .c file"
    cp "$src"/*.control "$src"/*--*.sql "$dest/share/postgresql/extension/" \
        || fail "the extension source $source_dir lacks its .control or NAME--V.sql file"
fi
chmod -R a+rX "$dest"
cd /
rm -rf "$work" /var/lib/apt/lists/*
echo "dbexp: extension $pkg $version laid out ($n module(s))"
