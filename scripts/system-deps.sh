#!/usr/bin/env bash
# System tools the test suite uses beside Python: shellcheck (systemd/install.sh) and
# systemd-analyze (the unit file). Installed from Debian's packages when missing and we are root;
# otherwise the tests that need them say so and are skipped.
set -euo pipefail
need=()
command -v shellcheck >/dev/null 2>&1 || need+=(shellcheck)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
if [ "${#need[@]}" -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "note: ${need[*]} missing and cannot be installed here; the tests that need them are skipped" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
