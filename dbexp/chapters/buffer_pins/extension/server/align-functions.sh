#!/bin/sh
# align-functions.sh TREE: have PostgreSQL in the configured and built source tree TREE compiled again with every
# function aligned to 64 bytes (the pgsql-hackers thread's CFLAGS += -falign-functions=64): the flag goes at the end
# of src/Makefile.global's CFLAGS, and the tree and its contrib are cleaned (make clean: every object, archive and
# program, the objfiles.txt lists the backend links from), so that the install step of
# docker/postgres-source/build-server.sh rebuilds all of them with it (pg_config then reports it, and the
# extensions compiled there get it too). The buffer_pins chapter's layout-only build: the same code as the 8-entry
# build, placed differently. A tree that is not the one this was written for fails in one line starting
# "dbexp-build-error: ".
set -eu
fail() { echo "dbexp-build-error: $*"; exit 1; }
tree=${1:-}
mk=$tree/src/Makefile.global
[ -n "$tree" ] && [ -f "$mk" ] || fail "align-functions.sh needs the configured source tree holding src/Makefile.global, not '$tree'"
n=$(grep -c '^CFLAGS = ' "$mk" || true)
[ "$n" = 1 ] || fail "src/Makefile.global holds $n lines 'CFLAGS = ...', not one: it is not the file align-functions.sh edits"
grep -q -e '-falign-functions' "$mk" && fail "src/Makefile.global already sets -falign-functions"
sed -i 's/^\(CFLAGS = .*\)$/\1 -falign-functions=64/' "$mk"
[ "$(grep -c '^CFLAGS = .* -falign-functions=64$' "$mk")" = 1 ] || fail "adding -falign-functions=64 to CFLAGS failed"
make -s -C "$tree" clean >/dev/null || fail "make clean failed in $tree"
make -s -C "$tree/contrib" clean >/dev/null || fail "make clean failed in $tree/contrib"
echo "dbexp: $mk: CFLAGS end with -falign-functions=64; the tree cleaned, to be rebuilt by the install step"
