#!/usr/bin/env bash
# CI: `make demo` from a fresh clone, as a user who is not root (the README says the demo needs no root
# and no PostgreSQL). Run as root: it makes the user `webmem-demo` when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
USER_NAME=${WEBMEM_DEMO_USER:-webmem-demo}
if [ "$(id -u)" -ne 0 ]; then
    echo "run this as root: it makes make demo's user" >&2
    exit 1
fi
id -u "$USER_NAME" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$USER_NAME"
# the user runs Debian's python3, whose venv module is a package of its own
/usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
home=$(getent passwd "$USER_NAME" | cut -d: -f6)
clone="$home/webmem-clone"
rm -rf "$clone"
git clone -q . "$clone"
chown -R "$USER_NAME" "$clone"
started=$(date +%s)
runuser -u "$USER_NAME" -- env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin make -C "$clone" demo
echo "make demo as $USER_NAME from a fresh clone: $(( $(date +%s) - started )) s"
