#!/usr/bin/env bash
# What the browser tests (tests/web/browser) use beside Python: Debian's chromium, driven by
# Playwright with executable_path (never `playwright install`, which downloads a browser build).
# Installed when missing and we are root; otherwise those tests say so and are skipped.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "note: chromium missing and cannot be installed here; the browser tests are skipped" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends chromium >/dev/null
