#!/bin/bash
# Entrypoint of the dbexp PostgreSQL images (written for dbexp; same contract as the official images):
#   docker run IMAGE postgres -c port=N -c listen_addresses=127.0.0.1 [-c key=value ...]
# On an empty $PGDATA it runs initdb as user postgres (superuser postgres, UTF8, locale from $LANG,
# trust for local and host connections, plus `host all all all $POSTGRES_HOST_AUTH_METHOD`),
# then execs postgres as user postgres. Logs go to stderr.
set -euo pipefail

say() { echo "dbexp-entrypoint: $*" >&2; }

# `docker run IMAGE -c x=y` means `postgres -c x=y`.
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
    set -- postgres "$@"
fi

if [ "$1" != postgres ]; then
    exec "$@"
fi
want_data=1
for arg in "$@"; do
    case "$arg" in
        --help|-\?|--version|-V|--describe-config) want_data=0 ;;
    esac
done

export PGDATA=${PGDATA:-/var/lib/postgresql/data}

if [ "$(id -u)" = 0 ]; then
    if [ "$want_data" = 1 ]; then
        mkdir -p "$PGDATA"
        find "$PGDATA" \! -user postgres -exec chown postgres:postgres {} +
        chmod 700 "$PGDATA"
        mkdir -p /var/run/postgresql
        chown postgres:postgres /var/run/postgresql
    fi
    export HOME=/var/lib/postgresql
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ "$want_data" = 1 ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    method=${POSTGRES_HOST_AUTH_METHOD:-trust}
    say "initializing $PGDATA: initdb (superuser postgres, UTF8, $LANG, auth trust, host $method)"
    # shellcheck disable=SC2086  # POSTGRES_INITDB_ARGS is a list of words, as in the official images
    initdb --pgdata="$PGDATA" --username=postgres --encoding=UTF8 --auth=trust --no-sync \
        ${POSTGRES_INITDB_ARGS:-} >&2
    printf '\n# dbexp: any host (the lab binds servers to loopback)\nhost all all all %s\n' "$method" \
        >> "$PGDATA/pg_hba.conf"
    say "initialized"
fi
exec "$@"
