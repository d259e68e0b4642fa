#!/usr/bin/env bash
# A disposable PostgreSQL that has pgvector, for .ci/run's pgvector pass (decision 028).
#
# Neither server of this machine has pgvector: the embedded PostgreSQL 18 ships without it and
# Debian bookworm packages none for PostgreSQL 15. Debian trixie packages both PostgreSQL 17 and
# postgresql-17-pgvector, but for a newer C library than bookworm's, so they run in a trixie root
# made by debootstrap (Debian's packages only; about a minute and 300 MB, kept in a cache folder
# and reused by later runs). Needs root (debootstrap and chroot).
#
#   scripts/pgvector-postgres.sh start       prints the URL of a new server (postgres superuser,
#                                            trust auth on 127.0.0.1, a random port, a fresh data
#                                            folder of its own, so runs side by side do not meet)
#   scripts/pgvector-postgres.sh stop URL    stops that server and removes its data folder
set -euo pipefail

root="${NORTH_PGVECTOR_ROOT:-/var/cache/north/pgvector-trixie}"
pg_bin=/usr/lib/postgresql/17/bin
data_for() { echo "/tmp/north-pgvector-$1"; } # inside the root, by port

prepare_root() {
  [ -f "$root/usr/lib/postgresql/17/lib/vector.so" ] && return
  command -v debootstrap >/dev/null 2>&1 || {
    apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null
  }
  rm -rf "$root.partial"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase --include=postgresql-17,postgresql-17-pgvector \
    trixie "$root.partial" http://deb.debian.org/debian >&2
  rm -rf "$root"
  mv "$root.partial" "$root"
}

in_root() { chroot "$root" su postgres -s /bin/sh -c "$1"; }

case "${1:-}" in
start)
  [ "$(id -u)" -eq 0 ] || { echo "pgvector-postgres.sh needs root (chroot)" >&2; exit 1; }
  prepare_root
  port=$(bun -e 'const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); console.log(s.port); s.stop(true)')
  data=$(data_for "$port")
  rm -rf "${root:?}$data"
  mkdir -p "$root$data"
  chroot "$root" chown postgres:postgres "$data"
  in_root "$pg_bin/initdb -D $data -U postgres --auth=trust -E UTF8 --locale=C.UTF-8" >/dev/null
  in_root "$pg_bin/pg_ctl -D $data -l $data/server.log -w start -o '-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$data -c dynamic_shared_memory_type=mmap -c max_connections=200 -c fsync=off'" >/dev/null
  echo "postgres://postgres@127.0.0.1:$port/postgres"
  ;;
stop)
  port=$(echo "${2:-}" | sed -nE 's|^postgres://[^/]*:([0-9]+)/.*$|\1|p')
  [ -n "$port" ] || { echo "usage: $0 stop URL (as start printed it)" >&2; exit 2; }
  data=$(data_for "$port")
  if [ -d "$root$data" ]; then
    in_root "$pg_bin/pg_ctl -D $data -m immediate stop" >/dev/null 2>&1 || true
    rm -rf "${root:?}$data"
  fi
  ;;
*)
  echo "usage: $0 start | stop URL" >&2
  exit 2
  ;;
esac
