#!/bin/bash
# Entrypoint of the dbexp MariaDB image (written for dbexp; same contract as the official images):
#   docker run IMAGE mysqld --port=N --bind-address=127.0.0.1 [--any-server-option ...]
# `mysqld` and `mariadbd` are the same server here. On an empty data directory it runs
# mariadb-install-db with the caller's options, then starts the server once with --init-file to
# create 'root'@'%' with an empty password. The server runs as user mysql and logs to stderr.
set -euo pipefail

INIT_SQL=/usr/local/share/dbexp/init-root.sql

say() { echo "dbexp-entrypoint: $*" >&2; }

if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
    set -- mysqld "$@"
fi

option() {
    local name=$1 value=$2 prev="" arg
    shift 2
    for arg in "$@"; do
        case "$arg" in
            --"$name"=*) value=${arg#*=} ;;
        esac
        if [ "$prev" = "--$name" ]; then value=$arg; fi
        prev=$arg
    done
    printf '%s' "$value"
}

case "$1" in
    mysqld|mariadbd) ;;
    *) exec "$@" ;;
esac
for arg in "$@"; do
    case "$arg" in
        --help|-\?|--version|-V|--bootstrap) exec "$@" ;;
    esac
done

datadir=$(option datadir /var/lib/mysql "$@")
socket=$(option socket /run/mysqld/mysqld.sock "$@")

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$datadir"
    find "$datadir" \! -user mysql -exec chown mysql:mysql {} +
    sockdir=$(dirname "$socket")
    if [ ! -d "$sockdir" ]; then
        mkdir -p "$sockdir"
        chown mysql:mysql "$sockdir"
    fi
    if [ -n "${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}" ]; then
        say "MARIADB_ROOT_PASSWORD/MYSQL_ROOT_PASSWORD is ignored: dbexp images give root an empty password"
    fi
    export HOME=/var/lib/mysql
    exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

if [ ! -d "$datadir/mysql" ]; then
    say "initializing $datadir: mariadb-install-db"
    # --force: go on where the container's hostname does not resolve (11.8's resolveip check fails)
    mariadb-install-db "${@:2}" --datadir="$datadir" --auth-root-authentication-method=normal \
        --skip-test-db --skip-name-resolve --force >&2
    say "initialized; first start creates 'root'@'%' (empty password)"
    set -- "$@" --init-file="$INIT_SQL"
fi
exec "$@"
