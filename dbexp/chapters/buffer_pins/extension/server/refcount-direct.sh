#!/bin/sh
# refcount-direct.sh TREE: edit PostgreSQL 18's bufmgr.c in the source tree TREE so that a backend's private pin
# counts live in an array indexed by buffer number, with no linear search (refcount_direct.inc, beside this
# script; the buffer_pins chapter's direct-mapped build). The original ReservePrivateRefCountEntry ..
# ForgetPrivateRefCountEntry stay in the file under #ifndef REFCOUNT_DIRECT_MAPPED; the define goes right after
# '#define REFCOUNT_ARRAY_ENTRIES 8', which is left as it is (docker/postgres-source/build-server.sh sets the
# size next). A file that is not the one this was written for fails in one line starting "dbexp-build-error: ".
set -eu
fail() { echo "dbexp-build-error: $*"; exit 1; }
tree=${1:-}
here=$(dirname "$0")
f=$tree/src/backend/storage/buffer/bufmgr.c
[ -n "$tree" ] && [ -f "$f" ] || fail "refcount-direct.sh needs the source tree holding src/backend/storage/buffer/bufmgr.c, not '$tree'"
[ -f "$here/refcount_direct.inc" ] || fail "refcount_direct.inc is not beside refcount-direct.sh"
once() {  # the line $1 must be in bufmgr.c exactly once
    n=$(grep -c -x -F "$1" "$f" || true)
    [ "$n" = 1 ] || fail "bufmgr.c holds the line '$1' $n times, not once: it is not the bufmgr.c refcount-direct.sh edits"
}
first=' * Ensure that the PrivateRefCountArray has sufficient space to store one more'
after=' * BufferIsPinned'
once '#define REFCOUNT_ARRAY_ENTRIES 8'
once "$first"
once "$after"
once 'ForgetPrivateRefCountEntry(PrivateRefCountEntry *ref)'
grep -q -x -F '#define REFCOUNT_DIRECT_MAPPED 1' "$f" && fail "bufmgr.c is already edited (REFCOUNT_DIRECT_MAPPED is defined)"
# the comment that opens each of the two functions' blocks starts on the line before the anchor
FIRST="$first" AFTER="$after" perl -0pi -e '
    my ($first, $after) = (quotemeta($ENV{FIRST}), quotemeta($ENV{AFTER}));
    s/^(#define REFCOUNT_ARRAY_ENTRIES 8\n)/$1#define REFCOUNT_DIRECT_MAPPED 1\n/m or die "define\n";
    s/^(\/\*\n$first\n)/#ifndef REFCOUNT_DIRECT_MAPPED\n$1/m or die "first\n";
    s/^(\/\*\n$after\n)/#else\n#include "refcount_direct.inc"\n#endif\t\t\t\t\t\t\t\/* REFCOUNT_DIRECT_MAPPED *\/\n\n$1/m or die "after\n";
' "$f" || fail "the edit of bufmgr.c failed (see the line above)"
cp "$here/refcount_direct.inc" "$(dirname "$f")/refcount_direct.inc" || fail "could not copy refcount_direct.inc"
[ "$(grep -c -x -F '#include "refcount_direct.inc"' "$f")" = 1 ] || fail "the edit of bufmgr.c left no include of refcount_direct.inc"
echo "dbexp: $f: private refcounts direct-mapped (REFCOUNT_DIRECT_MAPPED, refcount_direct.inc)"
