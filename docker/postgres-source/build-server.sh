#!/bin/sh
# build-server.sh fetch SUITE PACKAGE VERSION DSC_SHA256 TARBALL_SHA256
#   Debian's source package PACKAGE=VERSION (postgresql-18 18.6-3, sid) by apt-get source --download-only from
#   the image's mirror (apt checks the files against the suite's signed Sources index), then its .dsc and its
#   upstream tarball (.orig.tar.*) against the pins in dbexp/catalog/catalog.py, and the .dsc must list that
#   tarball's SHA256; the upstream tree is unpacked to /usr/src/postgresql WITHOUT Debian's patches (they move
#   the install paths to /usr/lib/postgresql/NN and edit configure.ac), configured with CONFIGURE_OPTIONS below
#   and built: the server, its programs and contrib (make, make -C contrib).
# build-server.sh install ENTRIES
#   sets bufmgr.c's `#define REFCOUNT_ARRAY_ENTRIES 8` (a backend's private pin array) to ENTRIES (8 rewrites
#   it unchanged: both builds take the same steps), rebuilds (bufmgr.o and the postgres it links into),
#   installs into /opt/postgres with the server headers and contrib, not stripped (make install, never
#   install-strip: the symbol table stays, local functions such as PinBuffer included), checks that
#   PrivateRefCountArray holds ENTRIES entries of 8 bytes, and compiles the extension sources in the build
#   context's folder EXTENSION_SOURCE (NAME.c, NAME.control, NAME--V.sql; empty: none) against the installed
#   headers with pg_config's flags (PGXS's: CFLAGS, CFLAGS_SL).
# A failure it can name is one line starting "dbexp-build-error: " (the lab shows that line).
set -eu
PIN_HOME=dbexp/catalog/catalog.py
SRC=${PG_SOURCE_TREE:-/usr/src/postgresql}  # (another tree: the unit tests of the patch step)
PREFIX=/opt/postgres
# The fixed configure options of both builds: PostgreSQL's own defaults (gcc -O2 plus configure's warning and
# code-generation flags) but for ICU and readline (not needed by the lab's servers: libc locales, no psql use)
CONFIGURE_OPTIONS="--prefix=$PREFIX --without-icu --without-readline --with-zlib"
CFLAGS_USED="-O2"
fail() { echo "dbexp-build-error: $*"; exit 1; }
jobs=$(nproc)

fetch() {
    suite=$1 pkg=$2 version=$3 dsc_sha=$4 tar_sha=$5
    [ -n "$version" ] && [ -n "$dsc_sha" ] && [ -n "$tar_sha" ] \
        || fail "$pkg needs a pinned version, .dsc SHA256 and tarball SHA256 in $PIN_HOME"
    export DEBIAN_FRONTEND=noninteractive
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
             | sed -n 's/^deb \([a-z]*:[^ ]*\) .*/\1/p; s/^URIs: *\([^ ]*\).*/\1/p' | head -n 1)
    [ -n "$mirror" ] || fail "no Debian mirror in the image's apt sources"
    echo "deb-src $mirror $suite main" > /etc/apt/sources.list.d/dbexp-source.list
    apt-get update -qq -o Acquire::Check-Valid-Until=false \
        || fail "apt-get update failed inside the image (see the lines above)"
    tools="gcc make bison flex perl libc6-dev zlib1g-dev bzip2 xz-utils binutils"
    # shellcheck disable=SC2086  # a list of package names
    apt-get install -y -qq --no-install-recommends $tools >/dev/null || fail "could not install $tools"
    if ! apt-cache showsrc "$pkg" 2>/dev/null | grep -qx "Version: $version"; then
        # the versions it has, each with its .dsc's SHA256 (the Sources index's Checksums-Sha256)
        have=$(apt-cache showsrc "$pkg" 2>/dev/null | awk '/^Version:/ {v=$2} /^Checksums-Sha256:/ {f=1; next}
               /^[^ ]/ {f=0} f && /\.dsc$/ {printf "%s%s (.dsc SHA256 %s)", sep, v, $1; sep=", "}')
        fail "source package $pkg $version is not on the mirror's $suite (it has ${have:-none}): pin what it has in $PIN_HOME"
    fi
    work=$(mktemp -d)
    chmod 755 "$work"
    chown _apt "$work" 2>/dev/null || true
    cd "$work"
    apt-get source -q --download-only "$pkg=$version" || fail "apt-get source $pkg=$version failed"
    dsc=$(ls ./*.dsc)
    got=$(sha256sum "$dsc" | cut -d' ' -f1)
    [ "$got" = "$dsc_sha" ] || fail "${dsc#./} has SHA256 $got, not the pinned $dsc_sha ($PIN_HOME)"
    tarball=$(ls ./*.orig.tar.*)
    got=$(sha256sum "$tarball" | cut -d' ' -f1)
    [ "$got" = "$tar_sha" ] || fail "${tarball#./} has SHA256 $got, not the pinned $tar_sha ($PIN_HOME)"
    grep -q "^ $tar_sha [0-9]* ${tarball#./}\$" "$dsc" || fail "${dsc#./} does not list ${tarball#./} with SHA256 $tar_sha"
    echo "dbexp: ${dsc#./} and ${tarball#./}: SHA256 match the pins"
    mkdir -p "$SRC"
    tar -xf "$tarball" -C "$SRC" --strip-components=1
    cd /
    rm -rf "$work" /etc/apt/sources.list.d/dbexp-source.list /var/lib/apt/lists/*
    cd "$SRC"
    echo "dbexp: configure $CONFIGURE_OPTIONS CFLAGS=$CFLAGS_USED ($(gcc --version | head -n 1))"
    # shellcheck disable=SC2086  # a list of options
    ./configure $CONFIGURE_OPTIONS CFLAGS="$CFLAGS_USED" >/dev/null || { tail -n 30 config.log; fail "configure failed"; }
    make -s -j"$jobs" >/dev/null || fail "the server build failed (see the lines above)"
    make -s -j"$jobs" -C contrib >/dev/null || fail "the contrib build failed (see the lines above)"
    echo "dbexp: PostgreSQL $(sed -n 's/^#define PG_VERSION "\(.*\)"$/\1/p' src/include/pg_config.h) built"
}

install_server() {
    entries=$1
    case "$entries" in ''|*[!0-9]*|0*) fail "REFCOUNT_ARRAY_ENTRIES must be a positive integer, not '$entries'" ;; esac
    cd "$SRC"
    f=src/backend/storage/buffer/bufmgr.c
    line='#define REFCOUNT_ARRAY_ENTRIES 8'
    n=$(grep -c -x "$line" "$f" || true)
    [ "$n" = 1 ] || fail "$f holds the line '$line' $n times, not once: cannot set REFCOUNT_ARRAY_ENTRIES"
    sed -i "s/^$line\$/#define REFCOUNT_ARRAY_ENTRIES $entries/" "$f"
    [ "$(grep -c -x "#define REFCOUNT_ARRAY_ENTRIES $entries" "$f")" = 1 ] || fail "setting REFCOUNT_ARRAY_ENTRIES failed"
    echo "dbexp: $f: #define REFCOUNT_ARRAY_ENTRIES $entries"
    make -s -j"$jobs" >/dev/null || fail "the rebuild with REFCOUNT_ARRAY_ENTRIES $entries failed"
    make -s install >/dev/null || fail "make install failed"
    make -s -C contrib install >/dev/null || fail "make -C contrib install failed"
    bin=$PREFIX/bin/postgres
    size=$(nm -S "$bin" | awk '$4 == "PrivateRefCountArray" {print $2}')
    [ -n "$size" ] && [ $((0x$size)) -eq $((entries * 8)) ] \
        || fail "PrivateRefCountArray is ${size:-missing} (hex) bytes, not $entries entries of 8"
    echo "dbexp: $bin: PrivateRefCountArray $((0x$size)) bytes, $(nm "$bin" | wc -l) symbols;" \
        "PinBuffer's: $(nm "$bin" | awk '$3 ~ /PinBuffer/ {print $3}' | tr '\n' ' ')"
    pg_config=$PREFIX/bin/pg_config
    n=0
    # EXTENSION_SOURCE: the extension's folder in the build context (empty: none)
    src=/tmp/build/${EXTENSION_SOURCE:-}
    [ -z "${EXTENSION_SOURCE:-}" ] || [ -d "$src" ] || fail "the extension source $EXTENSION_SOURCE is not in the build context"
    [ -n "${EXTENSION_SOURCE:-}" ] || src=/nonexistent
    for c in "$src"/*.c; do
        [ -f "$c" ] || continue
        name=$(basename "$c" .c)
        # shellcheck disable=SC2046  # pg_config's flags are lists of words, as PGXS uses them
        gcc $($pg_config --cflags) $($pg_config --cflags_sl) -I"$($pg_config --includedir-server)" -shared \
            -o "$($pg_config --pkglibdir)/$name.so" "$c" || fail "$name.c did not compile (see the lines above)"
        cp "$src"/*.control "$src"/*--*.sql \
            "$($pg_config --sharedir)/extension/" || fail "the extension source lacks its .control or NAME--V.sql"
        n=$((n + 1))
        echo "dbexp: extension $name compiled against $($pg_config --version)"
    done
    {
        echo "source: Debian source package (unpatched upstream tarball), see the image labels"
        echo "configure: $CONFIGURE_OPTIONS CFLAGS=$CFLAGS_USED"
        echo "compiler: $(gcc --version | head -n 1)"
        echo "REFCOUNT_ARRAY_ENTRIES: $entries"
        echo "extensions compiled: $n"
    } > "$PREFIX/dbexp-build.txt"
}

case "${1:-}" in
    fetch) shift; fetch "$@" ;;
    install) shift; install_server "$@" ;;
    *) fail "usage: build-server.sh fetch SUITE PACKAGE VERSION DSC_SHA256 TARBALL_SHA256 | install ENTRIES" ;;
esac
