#!/usr/bin/env bash
# The Debian packages `make test` needs besides Python's: Chromium (slide and browser tests), Node.js/npm
# (the decks' reveal.js, the hub test's configurable-http-proxy), bubblewrap (the grading sandbox; the hub
# test's servers), and python3.X-venv when .venv is still to be made and this Python has no ensurepip.
# `make test` runs this first; `tools/system-deps.sh lab` checks only what `make lab` needs (the venv
# module).
#
# Everything present: nothing is done and nothing is printed. Something missing: as root,
# `apt-get update` and `apt-get install`; as a user with passwordless sudo, the same through `sudo -n`;
# otherwise one line saying what to run, and exit status 1, before any test starts.
#
# Where it looks can be changed for the tests (tests/test_system_deps.py): CHROMIUM (a browser to use,
# as the browser tests read it), CHROMIUM_CANDIDATES, PYTHON and VENV (as in the Makefile), and PATH.
set -euo pipefail

what=${1:-test}
case "$what" in
    test | lab) ;;
    *) echo "system-deps.sh: unknown argument '$what'; expected 'test' or 'lab'" >&2; exit 2 ;;
esac

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
# The same places, in the same order, as tests/browser_helpers.py looks.
CHROMIUM_CANDIDATES=${CHROMIUM_CANDIDATES:-/usr/lib/chromium/chromium chromium chromium-browser google-chrome}

# An executable file at that path, or of that name on PATH (`command -v` alone may name a file that
# cannot be run).
have() {
    local path
    path=$(command -v "$1" 2>/dev/null) && [ -f "$path" ] && [ -x "$path" ]
}

have_chromium() {
    local c
    for c in ${CHROMIUM:-} $CHROMIUM_CANDIDATES; do
        have "$c" && return 0
    done
    return 1
}

# The Debian package that gives $PYTHON a working `python -m venv` (Debian splits ensurepip off).
venv_package() {
    [ -x "$VENV/bin/python" ] && return 0  # already made: nothing to do
    "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1 && return 0
    local version
    version=$("$PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || version=3
    echo "python$version-venv"
}

missing=()
if ! have "$PYTHON"; then
    missing+=(python3 python3-venv)
else
    pkg=$(venv_package)
    [ -z "$pkg" ] || missing+=("$pkg")
fi
if [ "$what" = test ]; then
    have_chromium || missing+=(chromium)
    have npm || missing+=(nodejs npm)
    have bwrap || missing+=(bubblewrap)
fi
[ "${#missing[@]}" -eq 0 ] && exit 0

packages="${missing[*]}"
advice="run: sudo apt-get install -y $packages"
[[ " $packages " == *" chromium "* ]] && advice="$advice (or set CHROMIUM=/path/to/a/chromium)"
fail() {
    echo "make $what needs the Debian packages: $packages. $1; $advice, then make $what again." >&2
    exit 1
}

command -v apt-get >/dev/null 2>&1 || fail "No apt-get here to install them"
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" -eq 0 ]; then
    sudo=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    sudo=(sudo -n DEBIAN_FRONTEND=noninteractive)  # sudo resets the environment
else
    fail "They can only be installed as root"
fi

echo "installing the Debian packages make $what needs: $packages"
"${sudo[@]}" apt-get update -q || fail "apt-get update failed"
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || fail "apt-get install failed"
