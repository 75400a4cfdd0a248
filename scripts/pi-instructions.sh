#!/usr/bin/env bash
# Count the instructions a Raspberry Pi's processor executes to read a frame, stage by stage:
# python -m vision.train.instructions run under qemu as a Pi 4's Cortex-A72 and a Pi 5's
# Cortex-A76, with a plugin that counts what the emulated processor executes
# (scripts/pi-instructions/count.c), in the arm64 system of scripts/emulated-pi.sh. qemu's
# speed says nothing of a Pi's; the count is the Pi's own (the same libraries choose the same
# kernels by the processor's features). A time follows only from the instructions a core
# retires a cycle, which no emulator gives.
#
#   scripts/pi-instructions.sh [--repeat N]
#
# Needs root, apt and the network to Debian's mirror (qemu-user, built with plugins, gcc, and
# qemu's source for the plugin's header); builds the emulated system first when it is missing
# (about 4 minutes). Each processor then takes about a minute.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
root="${PIPCAM_PI_ROOT:-/var/tmp/pipcam-pi-arm64}"

if [ "$(id -u)" -ne 0 ]; then
    echo "pi-instructions: run as root (it installs qemu-user and gcc)" >&2
    exit 1
fi
if [ ! -x "$root/opt/venv/bin/python" ]; then
    "$repo/scripts/emulated-pi.sh" true
fi
if mountpoint -q "$root/proc"; then
    echo "pi-instructions: scripts/emulated-pi.sh is running in $root; wait for it to end" >&2
    exit 1
fi
if ! command -v qemu-aarch64 >/dev/null || ! command -v gcc >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user gcc >/dev/null
fi

work="$(mktemp -d /tmp/pipcam-instructions.XXXXXX)"
made=()
cleanup() {
    rm -f "${made[@]}"
    rm -rf "$work"
}
trap cleanup EXIT

# Debian ships no header for qemu's plugins: it comes from qemu's source package, fetched with
# package lists of our own so that the system's apt is left as it was.
mkdir -p "$work/apt/lists/partial" "$work/apt/cache"
codename="$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release)"
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $codename main" \
    >"$work/apt/sources.list"
apt=(apt-get -qq -o APT::Sandbox::User=root -o Dir::Etc::SourceList="$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache")
"${apt[@]}" update
(cd "$work" && "${apt[@]}" source --download-only qemu >/dev/null 2>&1)
tar -xJf "$work"/qemu_*.orig.tar.xz -C "$work" --wildcards '*/include/qemu/qemu-plugin.h'
header="$(find "$work" -name qemu-plugin.h -print -quit)"
gcc -O2 -Wall -shared -fPIC -I"$(dirname "$header")" -o "$work/libcount.so" \
    "$repo/scripts/pi-instructions/count.c"

# qemu looks a path up in the system first and, when it is missing there, on this machine:
# onnxruntime would read this machine's x86 /proc/cpuinfo and crash. A Pi's own lines stand in
# (removed at the end; scripts/emulated-pi.sh mounts a real /proc there).
mkdir -p "$root/sys/devices/system/cpu"
for name in possible present online; do
    echo 0-3 >"$root/sys/devices/system/cpu/$name"
    made+=("$root/sys/devices/system/cpu/$name")
done
cpuinfo() { # features, variant, part, revision, model
    for n in 0 1 2 3; do
        printf 'processor\t: %s\nBogoMIPS\t: 108.00\nFeatures\t: %s\nCPU implementer\t: 0x41\n' "$n" "$1"
        printf 'CPU architecture: 8\nCPU variant\t: %s\nCPU part\t: %s\nCPU revision\t: %s\n\n' "$2" "$3" "$4"
    done
    printf 'Model\t\t: %s\n' "$5"
}
made+=("$root/proc/cpuinfo")

site="$(cd "$root" && echo opt/venv/lib/python3*/site-packages)"
cd "$repo"
for cpu in cortex-a72 cortex-a76; do
    if [ "$cpu" = cortex-a72 ]; then
        cpuinfo "fp asimd evtstrm crc32 cpuid" 0x0 0xd08 3 "Raspberry Pi 4 Model B" >"$root/proc/cpuinfo"
    else
        cpuinfo "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp" \
            0x4 0xd0b 1 "Raspberry Pi 5 Model B" >"$root/proc/cpuinfo"
    fi
    : >"$work/count.txt"
    echo "== $cpu"
    env -i HOME=/root PYTHONPATH="/$site:$repo" PIPCAM_COUNT_FILE="$work/count.txt" \
        qemu-aarch64 -L "$root" -cpu "$cpu" -plugin "$work/libcount.so,out=$work/count.txt" \
        "$root/usr/bin/python3" -m vision.train.instructions "$@"
done
