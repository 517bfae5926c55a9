#!/usr/bin/env bash
# Usage: test/ship/postgres-image.sh IMAGE
# Makes IMAGE, a stand-in for the official postgres image where no image registry is reachable, as
# base-image.sh does for Node: Debian bookworm (debootstrap minbase) with Debian's PostgreSQL 15, and an
# entrypoint doing what the official image's does for the settings compose.postgres.yaml uses: on an empty
# /var/lib/postgresql/data, initdb with POSTGRES_USER and POSTGRES_PASSWORD, create POSTGRES_DB and accept
# password logins from the network; then run postgres in the foreground as the postgres user, with pg_isready
# on the PATH for the compose file's health check. Needs root, debootstrap and podman (with CONTAINERS_CONF as
# the container test sets it).
set -euo pipefail
image=$1
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" >/dev/null
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Install without starting anything in the chroot; the cluster the package makes is dropped, the entrypoint
# makes its own in the volume.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
chroot "$root" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null 2>&1'
chroot "$root" sh -c 'rm -rf /usr/sbin/policy-rc.d /etc/postgresql/15 /var/lib/postgresql/15 /var/lib/apt/lists/* /var/cache/apt/*.bin'
chroot "$root" sh -c 'install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data && install -d -o postgres -g postgres -m 2775 /var/run/postgresql'
cat >"$root/usr/local/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -eu
export PGDATA=/var/lib/postgresql/data
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password"
  initdb --username="${POSTGRES_USER:-postgres}" --pwfile="$password" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != "${POSTGRES_USER:-postgres}" ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\";" | postgres --single -D "$PGDATA" postgres >/dev/null
  elif [ "${POSTGRES_USER:-postgres}" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_USER\";" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
EOF
chmod 755 "$root/usr/local/bin/docker-entrypoint.sh"
tar -C "$root" -c . | podman --runtime runc import \
  --change 'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'USER postgres' \
  --change 'VOLUME /var/lib/postgresql/data' \
  --change 'EXPOSE 5432' \
  --change 'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]' \
  - "$image" >/dev/null
