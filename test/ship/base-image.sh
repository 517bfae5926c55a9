#!/usr/bin/env bash
# Usage: test/ship/base-image.sh NODE_DIR IMAGE
# Makes IMAGE, a stand-in for the official node:<major>-bookworm-slim where no image registry is reachable
# (/work/shared/containers.md): Debian bookworm (debootstrap minbase), the Node binary and headers of NODE_DIR
# (from .ci/fetch-node), this machine's npm, the host's CA bundle, and the `node` user (uid 1000) the official
# images have. npm inside it builds native modules against those headers, since none can be downloaded.
# Needs root, debootstrap and podman (with CONTAINERS_CONF as the container test sets it).
set -euo pipefail
node_dir=$1
image=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" >/dev/null
install -D -m 755 "$node_dir/bin/node" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/include" "$root/usr/local/lib/node_modules" "$root/usr/local/etc" "$root/etc/ssl/certs"
cp -r "$node_dir/include/node" "$root/usr/local/include/node"
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
cp -r "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nnodedir=/usr/local\nupdate-notifier=false\n' >"$root/usr/local/etc/npmrc"
chroot "$root" sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
tar -C "$root" -c . | podman --runtime runc import - "$image" >/dev/null
