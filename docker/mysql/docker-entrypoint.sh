#!/bin/bash
# Entrypoint of the dbexp MySQL images (written for dbexp; same contract as the official images):
#   docker run IMAGE mysqld --port=N --bind-address=127.0.0.1 [--any-mysqld-option ...]
# On an empty data directory it runs `mysqld --initialize-insecure` with the caller's options
# (so init-time options such as innodb_page_size apply), then starts mysqld once with
# --init-file to create 'root'@'%' (the image's init-root.sql: mysql_native_password in 5.7 and
# 8.0, caching_sha2_password in 9.x) with an empty password, or MYSQL_ROOT_PASSWORD where set.
# Used by mysql/ and, through a link, mysql-debian/. The server runs as user mysql and logs to stderr.
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
    export HOME=/var/lib/mysql
    exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

if [ ! -d "$datadir/mysql" ]; then
    say "initializing $datadir: mysqld --initialize-insecure"
    "$@" --initialize-insecure
    init=$INIT_SQL
    if [ -n "${MYSQL_ROOT_PASSWORD:-}" ]; then
        # the image's statements, then root's password (as an SQL string: \ and ' doubled)
        init=$(mktemp /tmp/dbexp-init-XXXXXX.sql)
        pw=$(printf '%s' "$MYSQL_ROOT_PASSWORD" | sed -e 's/\\/\\\\/g' -e "s/'/''/g")
        { cat "$INIT_SQL"
          printf "ALTER USER 'root'@'%%' IDENTIFIED BY '%s';\n" "$pw"
          printf "ALTER USER 'root'@'localhost' IDENTIFIED BY '%s';\n" "$pw"; } > "$init"
        say "initialized; first start creates 'root'@'%' (password from MYSQL_ROOT_PASSWORD)"
    else
        say "initialized; first start creates 'root'@'%' (empty password)"
    fi
    set -- "$@" --init-file="$init"
fi
exec "$@"
