#!/bin/bash
# Entrypoint of the dbexp MySQL images (written for dbexp; same contract as the official images):
#   docker run IMAGE mysqld --port=N --bind-address=127.0.0.1 [--any-mysqld-option ...]
# On an empty data directory it runs `mysqld --initialize-insecure` with the caller's options
# (so init-time options such as innodb_page_size apply), then starts mysqld once with
# --init-file to create 'root'@'%' with an empty password (mysql_native_password).
# The server runs as user mysql and logs to stderr.
set -euo pipefail

INIT_SQL=/usr/local/share/dbexp/init-root.sql

say() { echo "dbexp-entrypoint: $*" >&2; }

# `docker run IMAGE --opt` means `mysqld --opt`.
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
    set -- mysqld "$@"
fi

# Last value of a mysqld option given as --name=value or --name value, else a default.
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

# Only a server start is prepared; anything else (a shell, mysqld --help) runs as asked.
if [ "$1" != mysqld ]; then
    exec "$@"
fi
for arg in "$@"; do
    case "$arg" in
        --help|-\?|--version|-V|--initialize|--initialize-insecure|--validate-config) exec "$@" ;;
    esac
done

datadir=$(option datadir /var/lib/mysql "$@")
socket=$(option socket /var/run/mysqld/mysqld.sock "$@")

if [ "$(id -u)" = 0 ]; then
    mkdir -p "$datadir"
    find "$datadir" \! -user mysql -exec chown mysql:mysql {} +
    sockdir=$(dirname "$socket")
    if [ ! -d "$sockdir" ]; then
        mkdir -p "$sockdir"
        chown mysql:mysql "$sockdir"
    fi
    if [ -n "${MYSQL_ROOT_PASSWORD:-}" ]; then
        say "MYSQL_ROOT_PASSWORD is ignored: dbexp images give root an empty password"
    fi
    export HOME=/var/lib/mysql
    exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

if [ ! -d "$datadir/mysql" ]; then
    say "initializing $datadir: mysqld --initialize-insecure"
    "$@" --initialize-insecure
    say "initialized; first start creates 'root'@'%' (empty password)"
    set -- "$@" --init-file="$INIT_SQL"
fi
exec "$@"
