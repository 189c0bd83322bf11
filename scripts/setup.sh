#!/usr/bin/env bash
# Prepare a fresh clone: a virtual environment with webmem, and a Chromium.
#   scripts/setup.sh demo   what `make demo` needs: webmem[bench] (no root, no PostgreSQL)
#   scripts/setup.sh        what `make test` needs as well: the test tools, PostgreSQL's server, Playwright MCP
# Installs Debian packages (chromium, postgresql, python3-venv, npm) only when they are missing and we are root.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-test}

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

apt_install() {
    command -v apt-get >/dev/null || return 1
    if [ ! -f /tmp/.webmem-apt-updated ]; then as_root apt-get update -qq && touch /tmp/.webmem-apt-updated; fi
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

if ! "$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
    echo "webmem needs Python 3.11 or newer as \$PYTHON (now: $PYTHON)" >&2
    exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
    if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
        rm -rf "$VENV"
        apt_install python3-venv || { echo "python3 -m venv failed; install python3-venv" >&2; exit 1; }
        "$PYTHON" -m venv "$VENV"
    fi
fi
"$VENV/bin/python" -m pip install -q --upgrade pip 2>/dev/null || true
if [ "$MODE" = demo ]; then
    "$VENV/bin/python" -m pip install -q -e '.[bench]'
else
    "$VENV/bin/python" -m pip install -q -e '.[test]'
fi

if [ "$MODE" != demo ] && [ -z "${WEBMEM_TEST_POSTGRES_URL:-}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_install postgresql || {
        echo "No PostgreSQL server binaries: install Debian's postgresql package, or set WEBMEM_TEST_POSTGRES_URL" >&2
        exit 1
    }
fi

if [ ! -x /usr/bin/chromium ] && ! command -v chromium >/dev/null && ! command -v google-chrome >/dev/null; then
    apt_install chromium || "$VENV/bin/python" -m playwright install chromium || {
        echo "No Chromium: install one with 'apt-get install -y chromium' or 'playwright install chromium'" >&2
        exit 1
    }
fi

[ "$MODE" = demo ] && exit 0

# Playwright MCP from npm, for the tests of the MCP proxy (it drives the Chromium above).
PLAYWRIGHT_MCP_VERSION=${PLAYWRIGHT_MCP_VERSION:-0.0.83}
NODE_DIR=${WEBMEM_NODE_DIR:-.cache/node}
if [ ! -f "$NODE_DIR/node_modules/@playwright/mcp/package.json" ] \
        || ! grep -q "\"version\": \"$PLAYWRIGHT_MCP_VERSION\"" "$NODE_DIR/node_modules/@playwright/mcp/package.json"; then
    command -v npm >/dev/null || apt_install nodejs npm || { echo "No npm: install Node.js 18 or newer" >&2; exit 1; }
    mkdir -p "$NODE_DIR"
    npm install --silent --no-audit --no-fund --prefix "$NODE_DIR" "@playwright/mcp@$PLAYWRIGHT_MCP_VERSION" >/dev/null
fi

# Playwright Test from npm, for the tests that run the TypeScript scripts `webmem script` writes.
PLAYWRIGHT_TEST_VERSION=${PLAYWRIGHT_TEST_VERSION:-1.65.1}
NODE_TEST_DIR=${WEBMEM_NODE_TEST_DIR:-.cache/node-test}
if [ ! -f "$NODE_TEST_DIR/node_modules/@playwright/test/package.json" ] \
        || ! grep -q "\"version\": \"$PLAYWRIGHT_TEST_VERSION\"" "$NODE_TEST_DIR/node_modules/@playwright/test/package.json"; then
    mkdir -p "$NODE_TEST_DIR"
    npm install --silent --no-audit --no-fund --prefix "$NODE_TEST_DIR" "@playwright/test@$PLAYWRIGHT_TEST_VERSION" >/dev/null
fi
