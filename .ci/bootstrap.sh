#!/usr/bin/env bash
# Set up bridge on a fresh Debian/Ubuntu machine with Python 3.11+: Chromium (apt, only when
# missing), a virtualenv in .venv, and bridge with its dev tools installed into it.
# With --tests, also Node.js (apt, only when missing) and the Node CDP clients the test suite
# drives. Idempotent: a second run only checks. Used by the README's commands and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

tests=false
for arg in "$@"; do
  case "$arg" in
    --tests) tests=true ;;
    *) echo "bootstrap: unknown option $arg (only --tests)" >&2; exit 2 ;;
  esac
done

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

need_apt=()
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
   && ! command -v google-chrome >/dev/null 2>&1 && [ -z "${BRIDGE_BROWSER:-}" ]; then
  need_apt+=(chromium)
fi
# Node.js runs the Node CDP clients the tests drive (Puppeteer, Playwright for Node).
if $tests && { ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; }; then
  need_apt+=(nodejs npm)
fi
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: installing ${need_apt[*]} with apt-get" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "bootstrap: bridge needs Python 3.11 or newer (found $(python3 --version))" >&2; exit 1; }

[ -x .venv/bin/python ] || python3 -m venv .venv
# Until 0.2 the distribution was called "bridge": a .venv made then has both, and pytest would
# load the plugin twice. Only ours can be there (this .venv is the checkout's own).
if .venv/bin/python -m pip show -q bridge >/dev/null 2>&1; then
  .venv/bin/python -m pip uninstall -y -q bridge
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'

# The Node clients, exactly as locked (no browser download: they connect to bridge).
if $tests && [ ! tests/node/node_modules/.package-lock.json -nt tests/node/package-lock.json ]; then
  npm ci --prefix tests/node --no-audit --no-fund --loglevel=error
fi
