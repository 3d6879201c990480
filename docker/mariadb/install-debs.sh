#!/bin/sh
# install-debs.sh PACKAGE VERSION SHA256 [ALSO ...]: install a server's Debian package during an image
# build (shared by the Debian-based recipes: mariadb/, mysql-debian/ links to it).
#   VERSION and SHA256 given (a pin from dbexp/catalog/catalog.py): exactly PACKAGE=VERSION, from a .deb
#   whose SHA256 is checked against the pin before anything is installed; ALSO (packages of the same
#   source, e.g. mariadb-client-core) at the same VERSION.
#   VERSION empty: the suite's current PACKAGE and ALSO.
# A failure it can name is one line starting "dbexp-build-error: " (the lab shows that line).
set -eu
pkg=$1 version=$2 sha=$3
shift 3
PIN_HOME=dbexp/catalog/catalog.py

# on stdout: Docker colours a step's stderr
fail() { echo "dbexp-build-error: $*"; exit 1; }

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || fail "apt-get update failed inside the image (see the lines above)"
if [ -z "$version" ]; then
    apt-get install -y --no-install-recommends "$pkg" "$@"
    exit 0
fi
[ -n "$sha" ] || fail "$pkg is pinned to $version without a SHA256: add the .deb's SHA256 to the pin in $PIN_HOME"

# (apt-cache show exits 0 for a version it does not know: look for its record instead)
if ! apt-cache show "$pkg=$version" 2>/dev/null | grep -q '^Package:'; then
    have=$(apt-cache policy "$pkg" | awk '/Candidate:/ {print $2}')
    if [ -z "$have" ] || [ "$have" = "(none)" ]; then
        fail "$pkg $version is not on the mirror, which has no $pkg at all: the pin in $PIN_HOME names a package this suite no longer ships"
    fi
    have_sha=$(apt-cache show "$pkg=$have" | awk '/^SHA256:/ {print $2; exit}')
    fail "$pkg $version is not on the mirror, which has $pkg $have: pin that in $PIN_HOME (version=\"$have\", sha256=\"$have_sha\", the SHA256 the mirror's Packages index lists) and update the build's version"
fi

dir=$(mktemp -d)
chmod 755 "$dir"
cd "$dir"
chown _apt "$dir" 2>/dev/null || true  # apt downloads as _apt where it can
apt-get download -q "$pkg=$version"
deb=$(ls ./*.deb)
got=$(sha256sum "$deb" | cut -d' ' -f1)
[ "$got" = "$sha" ] || fail "${deb#./} has SHA256 $got, not the pinned $sha ($PIN_HOME): the mirror serves another file under the same version; check it before pinning its sum"
echo "dbexp: ${deb#./}: SHA256 $got matches the pin"
also=""
for extra in "$@"; do also="$also $extra=$version"; done
# shellcheck disable=SC2086  # ALSO is a list of words
apt-get install -y --no-install-recommends "$deb" $also
cd /
rm -rf "$dir"
