#!/usr/bin/env bash
# Install the host tools the lab drives: sysbench, debootstrap, Docker's engine, MySQL/PostgreSQL
# clients, the libraries the offline MySQL binaries need for bare runs, and Chromium for the
# chart check. Debian-like hosts with root only; elsewhere it says what is missing.
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
dpkg -s libaio1 >/dev/null 2>&1 || need+=(libaio1)
dpkg -s libnuma1 >/dev/null 2>&1 || need+=(libnuma1)
# An engine is needed only where none answers and DOCKER_HOST does not point elsewhere.
if [ -z "${DOCKER_HOST:-}" ] && ! have dockerd && ! docker info >/dev/null 2>&1; then
  need+=(docker.io)
fi

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! have apt-get; then
  echo "setup: missing ${need[*]}; install them with your package manager (they are Debian package names)" >&2
  exit 1
fi
echo "setup: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
