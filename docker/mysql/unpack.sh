#!/bin/sh
# unpack.sh ARCHIVE DEST: extract a MySQL binary tarball into DEST, keeping only what mysqld
# needs to run (bin/mysqld with its bundled OpenSSL, share/ with charsets and error messages).
# Used by the Dockerfile and by dbexp.images.binaries.server_home (bare runs): one layout for both.
set -eu
archive=$1
dest=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$archive" -C "$work" --no-same-owner
[ -x "$work/bin/mysqld" ] || { echo "unpack.sh: no bin/mysqld in $archive" >&2; exit 1; }
# Everything in bin/ except the server and the library links beside it is a client or a tool.
find "$work/bin" -mindepth 1 ! -name mysqld ! -name 'lib*.so*' -exec rm -rf {} +
rm -rf "$work/mysql-test" "$work/docs" "$work/man" "$work/include" "$work/support-files" \
       "$work/README" "$work/lib/plugin/debug" "$work/share/errmsg-utf8.txt"
find "$work" -name '*.a' -delete
find "$work" -name '*-debug' -delete
mkdir -p "$dest"
cp -a "$work/." "$dest/"
chmod -R a+rX "$dest"
