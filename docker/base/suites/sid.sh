#!/bin/sh
# suites/sid.sh ROOTFS: what dbexp/base:sid needs beyond trim.sh (run after it, on the host).
# The mirror's sid Release file is past its Valid-Until date (sid's index is not re-signed on every
# mirror in time), and apt refuses an expired Release: every `apt-get update` inside the image would
# fail. The index is still verified against Debian's signing keys; only its expiry is not checked.
set -eu
root=$1
cat > "$root/etc/apt/apt.conf.d/91dbexp-sid" <<'CONF'
// dbexp/base:sid: the mirror's sid Release file is past its Valid-Until date; accept it (still signed).
Acquire::Check-Valid-Until "false";
CONF
