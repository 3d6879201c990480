#!/bin/sh
# install-server.sh SUITE PACKAGE VERSION SHA256: PostgreSQL from Debian's server package (postgresql-NN), pinned,
# without Debian's cluster tooling: the .deb is checked against SHA256 (the pin in dbexp/catalog/catalog.py)
# and unpacked with dpkg -x at Debian's paths (/usr/lib/postgresql/NN/{bin,lib}, /usr/share/postgresql/NN),
# then only the libraries (and tzdata) it depends on are installed from the image's suite; no postgresql-common,
# no client package, no postinst (the entrypoint runs initdb, as in postgres/). /opt/postgres links to
# /usr/lib/postgresql/NN, so /opt/postgres/bin holds postgres, initdb and pg_ctl as in the npm images (the
# binaries find their share/ and lib/ at Debian's compiled-in paths).
#   SUITE: the suite that ships PACKAGE where the image's own does not (experimental), added for the download only.
# A failure it can name is one line starting "dbexp-build-error: " (the lab shows that line).
set -eu
suite=$1 pkg=$2 version=$3 sha=$4
PIN_HOME=dbexp/catalog/catalog.py
fail() { echo "dbexp-build-error: $*"; exit 1; }

[ -n "$version" ] && [ -n "$sha" ] || fail "$pkg needs a pinned version and SHA256 in $PIN_HOME"
export DEBIAN_FRONTEND=noninteractive
if [ -n "$suite" ]; then
    mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null \
             | sed -n 's/^deb \([a-z]*:[^ ]*\) .*/\1/p; s/^URIs: *\([^ ]*\).*/\1/p' | head -n 1)
    [ -n "$mirror" ] || fail "no Debian mirror in the image's apt sources"
    echo "deb $mirror $suite main" > /etc/apt/sources.list.d/dbexp-server.list
fi
apt-get update -qq || fail "apt-get update failed inside the image (see the lines above)"
if ! apt-cache show "$pkg=$version" 2>/dev/null | grep -q '^Package:'; then
    have=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
    fail "$pkg $version is not on the mirror's ${suite:-suites} (it has ${have:-none}): pin what it has in $PIN_HOME"
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
rm -f /etc/apt/sources.list.d/dbexp-server.list
apt-get update -qq

# its Depends, first alternative of each, without versions: the libraries and tzdata (the build uses the
# system's time zone data); postgresql-common, the client package, ssl-cert, locales, debconf are left out
libs=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/ //g' \
       | grep -E '^(lib|zlib|tzdata)' | tr '\n' ' ')
echo "dbexp: installing what $pkg needs: $libs"
# shellcheck disable=SC2086  # a list of package names
apt-get install -y -qq --no-install-recommends $libs >/dev/null || fail "installing $pkg's libraries failed: $libs"
dpkg -x "$deb" /
major=$(ls /usr/lib/postgresql)
[ -x "/usr/lib/postgresql/$major/bin/postgres" ] || fail "$pkg $version holds no usr/lib/postgresql/*/bin/postgres"
ln -s "/usr/lib/postgresql/$major" /opt/postgres
missing=$(ldd /opt/postgres/bin/postgres | grep 'not found' || true)
[ -z "$missing" ] || fail "postgres lacks libraries: $missing"
rm -rf /usr/share/doc /usr/share/man /usr/share/lintian
cd /
rm -rf "$work" /var/lib/apt/lists/*
echo "dbexp: $pkg $version installed: /opt/postgres -> /usr/lib/postgresql/$major"
