#!/usr/bin/env bash
# Install (or update) pipcam as a service on 64-bit Raspberry Pi OS (Bookworm or later).
#
#   sudo systemd/install.sh
#
# Run it from a checkout of pipcam; it copies that checkout to /opt/pipcam, so the checkout can
# be anywhere and can be deleted afterwards. Running it again updates the code and restarts the
# service; the games in /var/lib/pipcam and an edited /etc/pipcam/pipcam.toml are kept.
#
# PIPCAM_ROOT (tests only) puts every file under that folder instead of /; the system commands
# (apt-get, useradd, systemctl, ...) still run, so the tests put stubs of them first on PATH.
set -euo pipefail
umask 022

readonly ROOT=${PIPCAM_ROOT:-}
readonly APP_DIR=$ROOT/opt/pipcam
readonly VENV=$APP_DIR/.venv
readonly SERVICE=pipcam.service
readonly UNIT_PATH=$ROOT/etc/systemd/system/$SERVICE
readonly CONFIG_DIR=$ROOT/etc/pipcam
readonly CONFIG=$CONFIG_DIR/pipcam.toml
# The service user's home: the unit's StateDirectory=, created by systemd.
readonly STATE_DIR=/var/lib/pipcam
readonly SERVICE_USER=pipcam
# picamera2 and lgpio must match the system's libcamera and kernel: apt, never pip (PI.md).
# --no-install-recommends keeps picamera2's desktop preview stack (Qt, OpenGL) off a Lite image.
readonly APT_PACKAGES=(python3-picamera2 python3-lgpio python3-gpiozero python3-venv)

SOURCE_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
readonly SOURCE_DIR

say() { printf 'pipcam: %s\n' "$*"; }
die() {
    printf 'pipcam install: %s\n' "$*" >&2
    exit 1
}

check_system() {
    local machine userland
    machine=$(uname -m)
    # A 32-bit userland on a 64-bit kernel also reports aarch64, so ask dpkg as well.
    userland=$(dpkg --print-architecture 2>/dev/null || echo unknown)
    if [[ $machine != aarch64 || $userland != arm64 ]]; then
        die "pipcam needs the 64-bit Raspberry Pi OS (kernel aarch64 and userland arm64); this \
system is kernel $machine, userland $userland. onnxruntime publishes no 32-bit ARM wheels: \
flash \"Raspberry Pi OS (64-bit)\" or \"Raspberry Pi OS Lite (64-bit)\" and run me again."
    fi
    [[ $EUID -eq 0 || -n $ROOT ]] || die "run me as root: sudo $0"
    command -v apt-get >/dev/null || die "apt-get not found: this installer is for Raspberry Pi OS"
    command -v systemctl >/dev/null || die "systemctl not found: pipcam runs as a systemd service"
    [[ -f $SOURCE_DIR/pyproject.toml && -f $SOURCE_DIR/systemd/$SERVICE ]] ||
        die "$SOURCE_DIR does not look like a pipcam checkout (no pyproject.toml or systemd/$SERVICE)"
}

install_packages() {
    say "installing ${APT_PACKAGES[*]} with apt"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${APT_PACKAGES[@]}"
}

create_user() {
    local group
    for group in video gpio; do
        if ! getent group "$group" >/dev/null; then
            # Raspberry Pi OS has both; a missing one would stop systemd from starting the unit.
            say "creating missing group $group (check that /dev/gpiochip* and /dev/video* use it)"
            groupadd --system "$group"
        fi
    done
    if id -u "$SERVICE_USER" >/dev/null 2>&1; then
        usermod --append --groups video,gpio "$SERVICE_USER"
    else
        say "creating system user $SERVICE_USER (groups video, gpio)"
        useradd --system --user-group --groups video,gpio --home-dir "$STATE_DIR" \
            --no-create-home --shell /usr/sbin/nologin --comment "pipcam dice companion" \
            "$SERVICE_USER"
    fi
}

copy_source() {
    if [[ $SOURCE_DIR == "$APP_DIR" ]]; then
        say "running from $APP_DIR: using the code in place"
        return
    fi
    say "copying $SOURCE_DIR to $APP_DIR"
    mkdir -p "$APP_DIR"
    # Replace the old code but keep the venv, so an update does not download every wheel again.
    find "$APP_DIR" -mindepth 1 -maxdepth 1 ! -name .venv -exec rm -rf -- {} +
    tar -C "$SOURCE_DIR" -cf - \
        --exclude=./.venv --exclude=./.git --exclude=__pycache__ --exclude='*.egg-info' \
        --exclude=./.mypy_cache --exclude=./.pytest_cache --exclude=./.ruff_cache \
        --exclude=./.hypothesis --exclude=./build --exclude=./dist --exclude=./.coverage . |
        tar -C "$APP_DIR" --no-same-owner -xf -
}

install_venv() {
    # picamera2 and lgpio live in the system's site-packages: the venv must see them.
    if [[ -x $VENV/bin/python ]] &&
        ! grep -qx 'include-system-site-packages = true' "$VENV/pyvenv.cfg"; then
        say "recreating $VENV with --system-site-packages"
        rm -rf -- "$VENV"
    fi
    if [[ ! -x $VENV/bin/python ]]; then
        say "creating $VENV"
        python3 -m venv --system-site-packages "$VENV"
    fi
    say "installing pipcam and its dependencies into $VENV (this takes a while on a Pi)"
    "$VENV/bin/python" -m pip install --quiet "$APP_DIR"
    # pip keeps an installed pipcam of the same version; force this checkout's code in.
    "$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps "$APP_DIR"
    check_imports
}

check_imports() {
    local probe='import picamera2, lgpio, gpiozero.pins.lgpio'
    # `import lgpio` makes a FIFO (.lgd-nfyN) in the working directory: probe in a scratch
    # folder, not in the caller's (it would leave a root-owned file there).
    PROBE_DIR=$(mktemp -d)
    trap 'rm -rf -- "$PROBE_DIR"' EXIT
    if (cd "$PROBE_DIR" && "$VENV/bin/python" -c "$probe" 2>/dev/null); then
        return
    fi
    # The venv's numpy 2 shadows the system's numpy 1, and apt's simplejpeg (imported by
    # picamera2) is built for numpy 1 (raspberrypi/picamera2#1088, #1211). PyPI's is built
    # for numpy 2.
    say "picamera2 does not import in the venv; installing simplejpeg from PyPI and retrying"
    "$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps simplejpeg
    (cd "$PROBE_DIR" && "$VENV/bin/python" -c "$probe") ||
        die "picamera2 or lgpio does not import in $VENV (error above); fix that and run me again"
}

install_files() {
    say "installing $UNIT_PATH"
    install -D -m 0644 "$APP_DIR/systemd/$SERVICE" "$UNIT_PATH"
    install -d -m 0755 "$CONFIG_DIR"
    if [[ -e $CONFIG ]]; then
        say "keeping your $CONFIG"
    else
        say "installing the example configuration as $CONFIG"
        install -m 0644 "$APP_DIR/systemd/pipcam.toml.example" "$CONFIG"
    fi
}

start_service() {
    local was_active=no
    systemctl is-active --quiet "$SERVICE" && was_active=yes
    systemctl daemon-reload
    # Type=notify: these return once pipcam has sent READY=1, or fail if it never does.
    if [[ $was_active == yes ]]; then
        say "restarting $SERVICE with the new code"
        systemctl enable "$SERVICE"
        systemctl restart "$SERVICE" || die "pipcam did not restart; see: journalctl -u pipcam -n 50"
    else
        say "enabling and starting $SERVICE"
        systemctl enable --now "$SERVICE" ||
            die "pipcam did not start; see: journalctl -u pipcam -n 50"
    fi
}

print_url() {
    # The same URL and QR code the service prints in its log at every start.
    "$VENV/bin/python" - "$CONFIG" <<'PY' || true
import sys
import tomllib

from pipcam.qr import listen_host, qr_text, scoreboard_url

with open(sys.argv[1], "rb") as config:
    table = tomllib.load(config).get("table", {})
url = scoreboard_url(int(table.get("port", 8000)), listen_host(table.get("host")))
sys.stdout.write(f"\nScoreboard for the phones at the table: {url}\n\n{qr_text(url)}\n")
PY
}

main() {
    check_system
    install_packages
    create_user
    copy_source
    install_venv
    install_files
    start_service
    print_url
    say "pipcam is running and starts at every boot."
    cat <<EOF

  Follow the log:       journalctl -u pipcam -f
  URL and QR code:      above, and in the log at every start: journalctl -u pipcam -b -o cat
  Status:               systemctl status pipcam
  Settings:             $CONFIG (then: sudo systemctl restart pipcam)
  Calibrate the tray:   empty it, then: sudo systemctl stop pipcam &&
                        sudo -u $SERVICE_USER $VENV/bin/pipcam calibrate --config $CONFIG &&
                        sudo systemctl start pipcam
  Games database:       $STATE_DIR
EOF
}

main "$@"
