#!/bin/sh
# trim.sh ROOTFS [HOST_SOURCES]: make a debootstrapped tree a small, quiet image base.
# Runs on the host against the tree (no chroot). HOST_SOURCES, when given, is the host's
# deb822 apt sources file: it replaces debootstrap's one-line sources.list so that images
# built on top see the same suites (updates, security) as the host.
set -eu
root=$1
sources=${2:-}

# apt inside image builds: no recommends, no docs, no caches left behind, no services started.
cat > "$root/etc/apt/apt.conf.d/90dbexp" <<'CONF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
CONF
cat > "$root/etc/dpkg/dpkg.cfg.d/90dbexp-nodoc" <<'CONF'
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/lintian/*
path-exclude=/usr/share/locale/*
CONF
printf '#!/bin/sh\nexit 101\n' > "$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"

if [ -n "$sources" ] && [ -f "$sources" ]; then
    mkdir -p "$root/etc/apt/sources.list.d"
    cp "$sources" "$root/etc/apt/sources.list.d/debian.sources"
    rm -f "$root/etc/apt/sources.list"
fi

# What a container never needs; docker provides hostname and resolv.conf at run time.
find "$root/usr/share/doc" -mindepth 1 ! -name copyright ! -type d -delete 2>/dev/null || true
find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete 2>/dev/null || true
rm -rf "$root/usr/share/man/"* "$root/usr/share/info/"* "$root/usr/share/locale/"* \
       "$root/usr/share/lintian" \
       "$root/var/cache/apt/"*.bin "$root/var/cache/apt/archives/"*.deb \
       "$root/var/lib/apt/lists/"* "$root/var/log/"*.log "$root/var/cache/debconf/"*-old \
       "$root/etc/hostname" "$root/etc/resolv.conf"
: > "$root/etc/resolv.conf"
