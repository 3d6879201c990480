#!/usr/bin/env bash
# Install the host tools the lab drives: sysbench, debootstrap, Docker's engine, MySQL/PostgreSQL
# clients, the libraries the offline MySQL binaries need for bare runs, Chromium for the chart
# check, perf and bpftrace for looking inside a running server, valgrind for counting a server's
# instructions (dbexp/servers/valgrind.py mounts it into the server's container), and a local registry (docker-registry, run by
# tests/test_registry.py, which starts its own; on systemd hosts the package also starts a service on
# port 5000). Debian-like hosts (Ubuntu too) as root or with password-less sudo;
# elsewhere it says what is missing.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have sysbench || need+=(sysbench)
have debootstrap || need+=(debootstrap)
have mysql || need+=(default-mysql-client)
have psql || need+=(postgresql-client)
have chromium || need+=(chromium)
have taskset || need+=(util-linux)
have mvn || need+=(maven)
have npm || need+=(npm)
have perf || need+=(linux-perf)
have bpftrace || need+=(bpftrace)
have valgrind || need+=(valgrind)
have docker-registry || need+=(docker-registry)
python3 -m venv --help >/dev/null 2>&1 || need+=(python3-venv)
# libaio1 was renamed libaio1t64 in Debian 13 and Ubuntu 24.04
if ! dpkg -s libaio1 >/dev/null 2>&1 && ! dpkg -s libaio1t64 >/dev/null 2>&1; then
  if apt-cache show libaio1 >/dev/null 2>&1; then need+=(libaio1); else need+=(libaio1t64); fi
fi
dpkg -s libnuma1 >/dev/null 2>&1 || need+=(libnuma1)
# An engine is needed only where none answers and DOCKER_HOST does not point elsewhere.
if [ -z "${DOCKER_HOST:-}" ] && ! have dockerd && ! docker info >/dev/null 2>&1; then
  need+=(docker.io)
fi

# Kernel tracing for the probes (bpftrace, perf's tracepoints): a fresh machine may not have tracefs
# mounted, and then every tracepoint is "not found". Mounted here when missing (root only; the lab
# mounts it too before any probe, and `dbexp doctor` says whether probes work).
mount_tracing() {
  [ "$(id -u)" = 0 ] || return 0
  if [ -d /sys/kernel/debug ] && ! grep -qs ' /sys/kernel/debug ' /proc/mounts; then
    mount -t debugfs nodev /sys/kernel/debug 2>/dev/null || echo "setup: could not mount debugfs" >&2
  fi
  if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/uprobe_events ]; then
    mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || echo "setup: could not mount tracefs" >&2
  fi
}

if [ ${#need[@]} -eq 0 ]; then
  mount_tracing
  exit 0
fi
# root, or a user with password-less sudo (a GitHub Actions runner)
as_root=()
if [ "$(id -u)" != 0 ] && have sudo && sudo -n true 2>/dev/null; then
  as_root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
fi
if { [ "$(id -u)" != 0 ] && [ ${#as_root[@]} -eq 0 ]; } || ! have apt-get; then
  echo "setup: missing ${need[*]}; install them with your package manager (they are Debian package names)" >&2
  exit 1
fi
echo "setup: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -q >/dev/null
# resolve the libaio name again now that the package lists are fresh
if [[ " ${need[*]} " == *" libaio1 "* ]] && ! apt-cache show libaio1 >/dev/null 2>&1; then
  need=("${need[@]/libaio1/libaio1t64}")
fi
# Ubuntu (GitHub's runners) has no linux-perf: perf comes with the running kernel's linux-tools. A
# package this distribution lacks is left out with a note: the lab says what it misses (dbexp doctor).
found=()
for pkg in "${need[@]}"; do
  if apt-cache show "$pkg" >/dev/null 2>&1; then
    found+=("$pkg")
  elif [ "$pkg" = linux-perf ] && apt-cache show "linux-tools-$(uname -r)" >/dev/null 2>&1; then
    found+=(linux-tools-common "linux-tools-$(uname -r)")
  else
    echo "setup: no package $pkg here; left out" >&2
  fi
done
[ ${#found[@]} -eq 0 ] || "${as_root[@]}" apt-get install -y -q --no-install-recommends "${found[@]}" >/dev/null
mount_tracing
