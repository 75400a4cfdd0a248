#!/usr/bin/env bash
# Run a command on a Raspberry Pi's processor without a Pi: an arm64 Debian 12 (Bookworm, as
# Raspberry Pi OS, Python 3.11) under qemu, the repository and ../shared bound in, pipcam's
# dependencies at the versions of this checkout's .venv. It says whether the reader's int8
# arithmetic gives the same readings there (python -m vision.train.machines); qemu's speed says
# nothing of a Pi's.
#
#   sudo scripts/emulated-pi.sh [--cpu cortex-a72|cortex-a76] [COMMAND ...]
#
# cortex-a72 is a Pi 4's processor, cortex-a76 a Pi 5's. Without a command it records what the
# emulated Pi reads and compares it with this machine's record (made first).
# Needs root, apt (qemu-user-static, debootstrap) and the network to Debian's mirror and PyPI;
# the first run takes some 4 minutes, the comparison about 8 more (qemu is ~60 times slower).
# The repository is bound into the system while it runs: to remove the system, check first that
# `mount | grep pipcam-pi` shows nothing (a killed run cannot unmount), or rm -rf deletes the
# repository too.
set -euo pipefail

cpu=cortex-a72
if [ "${1:-}" = "--cpu" ]; then
    cpu="${2:?--cpu needs a qemu processor name, as cortex-a72 (Pi 4) or cortex-a76 (Pi 5)}"
    shift 2
fi
repo="$(cd "$(dirname "$0")/.." && pwd)"
shared="$(cd "$repo/.." && pwd)/shared"
root="${PIPCAM_PI_ROOT:-/var/tmp/pipcam-pi-arm64}"

if [ "$(id -u)" -ne 0 ]; then
    echo "emulated-pi: run as root (it installs qemu and builds an arm64 system in $root)" >&2
    exit 1
fi
if ! command -v qemu-aarch64-static >/dev/null || ! command -v debootstrap >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static debootstrap >/dev/null
fi
# The kernel runs arm64 programs through qemu once qemu is registered for them.
if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    cat /usr/lib/binfmt.d/qemu-aarch64.conf >/proc/sys/fs/binfmt_misc/register
fi
if [ ! -x "$root/usr/bin/python3" ]; then
    debootstrap --arch=arm64 --variant=minbase --include=python3,python3-venv,ca-certificates \
        bookworm "$root" http://deb.debian.org/debian
fi

mkdir -p "$root/work/pipcam" "$root/work/shared"
mounts=()
cleanup() {
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount "${mounts[i]}" || true; done
}
trap cleanup EXIT
mount --bind "$repo" "$root/work/pipcam" && mounts+=("$root/work/pipcam")
if [ -d "$shared" ]; then
    mount --bind "$shared" "$root/work/shared" && mounts+=("$root/work/shared")
fi
# /proc only: with the host's /sys bound in, onnxruntime's cpuinfo reads an x86 processor's
# files and qemu crashes; without it onnxruntime takes the features from the kernel (HWCAP).
mount -t proc proc "$root/proc" && mounts+=("$root/proc")
cp /etc/resolv.conf "$root/etc/resolv.conf"
# A proxy's certificate authority, if this machine reaches PyPI through one.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"

# qemu reads the processor to emulate from QEMU_CPU each time the kernel starts an arm64 program.
in_pi() {
    QEMU_CPU="$cpu" chroot "$root" /usr/bin/env -i HOME=/root PATH=/opt/venv/bin:/usr/bin:/bin \
        PYTHONPATH=/work/pipcam QEMU_CPU="$cpu" PIP_DISABLE_PIP_VERSION_CHECK=1 \
        PIP_CERT=/etc/ssl/certs/ca-certificates.crt /bin/sh -c 'cd /work/pipcam && exec "$@"' sh "$@"
}

if [ ! -x "$root/opt/venv/bin/python" ]; then
    in_pi python3 -m venv /opt/venv
fi
# pipcam's dependencies (and what the vision tests run with: pytest, hypothesis, and tqdm for the
# die check's fitter), at the versions this checkout's .venv runs, so that only the processor
# differs.
python3 -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"] + ["pytest", "hypothesis", "tqdm"]))' \
    "$repo/pyproject.toml" >"$root/tmp/wanted.txt"
if [ -x "$repo/.venv/bin/pip" ]; then
    "$repo/.venv/bin/pip" freeze --exclude-editable >"$root/tmp/pins.txt"
else
    : >"$root/tmp/pins.txt"
fi
in_pi pip install -q -c /tmp/pins.txt -r /tmp/wanted.txt

if [ "$#" -gt 0 ]; then
    in_pi "$@"
    exit
fi
record="$repo/.emulated-pi"
mkdir -p "$record"
# This machine's record is made again each time (a minute): one of other models or photos would
# be refused by the comparison.
(cd "$repo" && .venv/bin/python -m vision.train.machines "$record/this-machine.json")
in_pi python -m vision.train.machines ".emulated-pi/$cpu.json" --against .emulated-pi/this-machine.json
