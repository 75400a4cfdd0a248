"""The service unit, the example configuration and the installer, checked offline."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from device.pins import PinMap

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "pipcam.service"
INSTALL = REPO / "systemd" / "install.sh"
EXAMPLE_CONFIG = REPO / "systemd" / "pipcam.toml.example"
EXEC_START = (
    "/opt/pipcam/.venv/bin/pipcam run --data /var/lib/pipcam --config /etc/pipcam/pipcam.toml"
)
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_systemd_analyze = pytest.mark.skipif(
    SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed (apt-get install systemd)"
)
# The highest acceptable `systemd-analyze security` exposure, in tenths (2.5 of 10).
MAX_EXPOSURE = 25

Unit = dict[str, list[tuple[str, str]]]


def parse_unit(text: str) -> Unit:
    """Sections of a unit file as (key, value) lists: keys may repeat, so no configparser."""
    sections: Unit = {}
    current: list[tuple[str, str]] | None = None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        assert current is not None, f"key outside a section: {line!r}"
        key, sep, value = line.partition("=")
        assert sep, f"not a key=value line: {line!r}"
        current.append((key.strip(), value.strip()))
    return sections


def values(unit: Unit, section: str, key: str) -> list[str]:
    """Every value of ``key`` in ``section``, in file order."""
    return [v for k, v in unit.get(section, []) if k == key]


def value(unit: Unit, section: str, key: str) -> str:
    """The single value of ``key`` in ``section``."""
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= set {len(found)} times"
    return found[0]


@pytest.fixture(scope="module")
def unit() -> Unit:
    return parse_unit(UNIT.read_text())


@pytest.mark.parametrize(
    ("section", "key", "expected"),
    [
        ("Unit", "After", "network-online.target"),
        ("Unit", "Wants", "network-online.target"),
        ("Service", "Type", "notify"),
        ("Service", "NotifyAccess", "main"),
        ("Service", "WatchdogSec", "30"),
        ("Service", "Restart", "on-failure"),
        ("Service", "User", "pipcam"),
        ("Service", "Group", "pipcam"),
        ("Service", "SupplementaryGroups", "video gpio"),
        ("Service", "StateDirectory", "pipcam"),
        # Writable (ProtectSystem=strict leaves / read-only): `import lgpio` makes a FIFO there.
        ("Service", "WorkingDirectory", "/var/lib/pipcam"),
        ("Service", "ConfigurationDirectory", "pipcam"),
        ("Service", "ExecStart", EXEC_START),
        ("Service", "ProtectSystem", "strict"),
        ("Service", "ProtectHome", "yes"),
        ("Service", "PrivateTmp", "yes"),
        ("Service", "NoNewPrivileges", "yes"),
        ("Service", "ProtectKernelTunables", "yes"),
        ("Service", "ProtectKernelModules", "yes"),
        ("Service", "ProtectControlGroups", "yes"),
        ("Service", "RestrictSUIDSGID", "yes"),
        ("Service", "LockPersonality", "yes"),
        ("Service", "RestrictRealtime", "yes"),
        ("Service", "RestrictNamespaces", "yes"),
        ("Service", "SystemCallArchitectures", "native"),
        ("Install", "WantedBy", "multi-user.target"),
    ],
)
def test_unit_key(unit: Unit, section: str, key: str, expected: str) -> None:
    assert value(unit, section, key) == expected


def test_environment_selects_lgpio_and_unbuffered_output(unit: Unit) -> None:
    assert values(unit, "Service", "Environment") == [
        "GPIOZERO_PIN_FACTORY=lgpio",
        "PYTHONUNBUFFERED=1",
    ]


def test_restart_delay_is_set(unit: Unit) -> None:
    assert float(value(unit, "Service", "RestartSec")) > 0


def test_only_a_configuration_error_stops_the_restarts(unit: Unit) -> None:
    """pipcam run's configuration refusals are not retried; a port in use, a held lock or a
    full disk (which clear by themselves) are."""
    from pipcam.run import EXIT_CONFIG, EXIT_RETRY

    prevented = value(unit, "Service", "RestartPreventExitStatus").split()
    assert prevented == [str(EXIT_CONFIG)]
    assert str(EXIT_RETRY) not in prevented


def test_watchdog_outlasts_a_feeding_period_with_margin(unit: Unit) -> None:
    # pipcam feeds at half of WatchdogSec (pipcam.notify.watchdog_interval_seconds).
    assert int(value(unit, "Service", "WatchdogSec")) >= 10


@pytest.mark.parametrize(
    "key",
    ["PrivateDevices", "DevicePolicy", "DeviceAllow", "PrivateUsers", "ProtectClock", "ProcSubset"],
)
def test_nothing_hides_the_camera_or_gpio_devices(unit: Unit, key: str) -> None:
    """Each of these would hide /dev/video*, /dev/media*, /dev/dma_heap or /dev/gpiochip*."""
    assert values(unit, "Service", key) == []


def test_netlink_stays_allowed_for_camera_hotplug(unit: Unit) -> None:
    families = value(unit, "Service", "RestrictAddressFamilies").split()
    assert set(families) == {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}


def runnable_copy(tmp_path: Path) -> Path:
    """The unit with ExecStart's program swapped for one that exists here, arguments kept."""
    text = UNIT.read_text()
    program = "/opt/pipcam/.venv/bin/pipcam "
    assert text.count(f"ExecStart={program}") == 1
    copy = tmp_path / "pipcam.service"
    copy.write_text(text.replace(f"ExecStart={program}", "ExecStart=/usr/bin/env true "))
    return copy


def analyze(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert SYSTEMD_ANALYZE is not None
    return subprocess.run(
        [SYSTEMD_ANALYZE, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        check=False,
        env={**os.environ, "SYSTEMD_LOG_COLOR": "0", "SYSTEMD_PAGER": ""},
    )


@needs_systemd_analyze
def test_systemd_analyze_verify_finds_only_the_missing_program(tmp_path: Path) -> None:
    """The real unit: the one complaint off a Pi is that /opt/pipcam is not installed here."""
    shutil.copy(UNIT, tmp_path / "pipcam.service")
    result = analyze("verify", tmp_path / "pipcam.service", cwd=tmp_path)
    output = (result.stdout + result.stderr).strip().splitlines()
    assert output == [
        "pipcam.service: Command /opt/pipcam/.venv/bin/pipcam is not executable: "
        "No such file or directory"
    ], "\n".join(output)


@needs_systemd_analyze
def test_systemd_analyze_verify_is_clean(tmp_path: Path) -> None:
    result = analyze("verify", runnable_copy(tmp_path), cwd=tmp_path)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


@needs_systemd_analyze
def test_systemd_analyze_security_exposure(tmp_path: Path) -> None:
    copy = runnable_copy(tmp_path)
    result = analyze("security", "--offline=yes", f"--threshold={MAX_EXPOSURE}", copy, cwd=tmp_path)
    if "--offline" in result.stderr and "unrecognized" in result.stderr:
        pytest.skip("this systemd-analyze has no --offline (systemd < 250)")
    score = re.search(r"Overall exposure level for pipcam\.service: ([\d.]+)", result.stdout)
    assert score is not None, result.stdout + result.stderr
    assert result.returncode == 0, f"exposure {score[1]} above {MAX_EXPOSURE / 10}"


# --- the example configuration -------------------------------------------------------------------

# The documented defaults of the table contract (device.PinMap) and of `pipcam run`.
CONTRACT_PINS = {
    "bank": 17,
    "confirm": 27,
    "undo": 22,
    "keep": 23,
    "led_ready": 5,
    "led_moving": 6,
    "led_ok": 13,
    "led_attention": 19,
    "seat_leds": [],
}


def example() -> dict[str, dict[str, object]]:
    with EXAMPLE_CONFIG.open("rb") as file:
        return tomllib.load(file)


def test_example_config_has_the_documented_defaults() -> None:
    config = example()
    assert config["table"] == {
        "host": "0.0.0.0",
        "port": 8000,
        "data": "/var/lib/pipcam",
        "camera": "picamera",
        "game": "kymppitonni",
        "players": ["Player 1", "Player 2"],
        "settle_seconds": 0.6,
    }
    assert config["game_options"] == {}
    assert config["pins"] == CONTRACT_PINS


def test_example_config_loads_with_the_defaults_of_pipcam_run() -> None:
    """Set keys equal the built-in defaults, except the service's data folder and camera."""
    from pipcam.config import Config, load_config

    loaded = load_config(EXAMPLE_CONFIG)
    built_in = Config()
    differing = {
        f.name
        for f in dataclasses.fields(Config)
        if getattr(loaded, f.name) != getattr(built_in, f.name)
    }
    assert differing == {"source", "data", "camera", "pins"}


def test_example_config_shows_every_table_key() -> None:
    from pipcam.config import Config

    text = EXAMPLE_CONFIG.read_text()
    keys = {f.name for f in dataclasses.fields(Config)} - {"source", "game_options", "pins"}
    missing = {k for k in keys if not re.search(rf"^(# )?{k} = ", text, re.MULTILINE)}
    assert missing == set()


def test_example_config_uses_no_pin_twice() -> None:
    pins = [p for name, p in example()["pins"].items() if name != "seat_leds"]
    assert len(pins) == len(set(pins))


def test_example_config_matches_the_device_pin_map() -> None:
    defaults = dataclasses.asdict(PinMap())
    assert {k: list(v) if isinstance(v, tuple) else v for k, v in defaults.items()} == (
        example()["pins"]
    )


def test_example_config_pins_load_as_the_default_pin_map() -> None:
    assert PinMap.from_dict(example()["pins"]) == PinMap()


def test_the_unit_reads_the_installed_example_config(unit: Unit) -> None:
    assert "--config /etc/pipcam/pipcam.toml" in value(unit, "Service", "ExecStart")
    assert "/etc/pipcam/pipcam.toml" in EXAMPLE_CONFIG.read_text().splitlines()[0]


# --- the installer -------------------------------------------------------------------------------


SCRIPTS = [INSTALL, *sorted((REPO / "scripts").glob("*.sh"))]
"""The installer and the scripts beside the Makefile."""


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_script_syntax(script: Path) -> None:
    subprocess.run(["bash", "-n", str(script)], check=True, timeout=30)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck is not installed")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_script_passes_shellcheck(script: Path) -> None:
    result = subprocess.run(
        ["shellcheck", str(script)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stdout


def stub(folder: Path, name: str, body: str) -> None:
    script = folder / name
    script.write_text(f'#!/usr/bin/env bash\necho "{name} $*" >> "$STUB_LOG"\n{body}\n')
    script.chmod(0o755)


@pytest.fixture
def fake_pi(tmp_path: Path) -> dict[str, str]:
    """Stubs of every system command the installer runs, logging to ``$STUB_LOG``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    state = tmp_path / "state"
    state.mkdir()
    stub(bin_dir, "uname", 'echo "${FAKE_UNAME:-aarch64}"')
    stub(bin_dir, "dpkg", 'echo "${FAKE_DPKG:-arm64}"')
    stub(bin_dir, "apt-get", "")
    stub(bin_dir, "getent", "")
    stub(bin_dir, "groupadd", "")
    stub(bin_dir, "usermod", "")
    stub(bin_dir, "useradd", f'touch "{state}/user"')
    stub(bin_dir, "id", f'[[ -e "{state}/user" ]]')
    stub(
        bin_dir,
        "systemctl",
        f"""case "$1" in
    is-active) [[ -e "{state}/active" ]] ;;
    enable) [[ "$2" == --now ]] && touch "{state}/active"; true ;;
esac""",
    )
    # The venv's python: pip and the import probe are logged; the URL printer runs for real.
    # The probe leaves what `import lgpio` leaves in its working directory, a FIFO .lgd-nfy0.
    venv_python = f"""#!/usr/bin/env bash
echo "venv-python $*" >> "$STUB_LOG"
if [[ "$1" == -c ]]; then echo "$PWD" >> "$STUB_LOG.cwd"; mkfifo .lgd-nfy0; fi
if [[ "$1" == - ]]; then exec "{sys.executable}" "$@"; fi
"""
    stub(
        bin_dir,
        "python3",
        f"""[[ "$1 $2 $3" == "-m venv --system-site-packages" ]] || exit 1
mkdir -p "$4/bin"
echo "include-system-site-packages = true" > "$4/pyvenv.cfg"
cat > "$4/bin/python" <<'EOF'
{venv_python}EOF
chmod +x "$4/bin/python\"""",
    )
    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "STUB_LOG": str(tmp_path / "calls.log"),
        "PIPCAM_ROOT": str(tmp_path / "root"),
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
    }


def run_install(env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(INSTALL)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("machine", "userland"),
    [
        pytest.param("armv7l", "armhf", id="32-bit"),
        pytest.param("aarch64", "armhf", id="64-bit-kernel-32-bit-userland"),
        pytest.param("x86_64", "amd64", id="pc"),
    ],
)
def test_installer_refuses_anything_but_64_bit_pi_os(
    fake_pi: dict[str, str], machine: str, userland: str
) -> None:
    result = run_install({**fake_pi, "FAKE_UNAME": machine, "FAKE_DPKG": userland})
    assert result.returncode == 1
    assert result.stderr.startswith(
        "pipcam install: pipcam needs the 64-bit Raspberry Pi OS (kernel aarch64 and userland "
        f"arm64); this system is kernel {machine}, userland {userland}."
    )
    assert not Path(fake_pi["STUB_LOG"]).read_text().count("apt-get")


def test_installer_sets_up_the_service_and_is_idempotent(fake_pi: dict[str, str]) -> None:
    root = Path(fake_pi["PIPCAM_ROOT"])
    log = Path(fake_pi["STUB_LOG"])

    first = run_install(fake_pi)
    assert first.returncode == 0, first.stderr
    calls = log.read_text().splitlines()
    assert (
        "apt-get install -y -q --no-install-recommends "
        "python3-picamera2 python3-lgpio python3-gpiozero python3-venv"
    ) in calls
    assert any(c.startswith("useradd --system --user-group --groups video,gpio") for c in calls)
    assert calls[-4:] == [
        "systemctl is-active --quiet pipcam.service",
        "systemctl daemon-reload",
        "systemctl enable --now pipcam.service",
        f"venv-python - {root}/etc/pipcam/pipcam.toml",
    ]
    venv = root / "opt/pipcam/.venv"
    assert f"venv-python -m pip install --quiet {root}/opt/pipcam" in calls
    assert "include-system-site-packages = true" in (venv / "pyvenv.cfg").read_text()
    assert (root / "etc/systemd/system/pipcam.service").read_text() == UNIT.read_text()
    assert (root / "etc/pipcam/pipcam.toml").read_text() == EXAMPLE_CONFIG.read_text()
    app = root / "opt/pipcam"
    assert (app / "pyproject.toml").is_file()
    assert (app / "pipcam" / "qr.py").is_file()
    assert not (app / ".git").exists()
    assert not (app / ".mypy_cache").exists()
    assert re.search(r"Scoreboard for the phones at the table: http://[\d.]+:8000/", first.stdout)
    assert "journalctl -u pipcam -f" in first.stdout
    # How to calibrate the tray: as the service's user, with the installed program and config.
    assert (
        f"sudo -u pipcam {root}/opt/pipcam/.venv/bin/pipcam calibrate --config"
        f" {root}/etc/pipcam/pipcam.toml"
    ) in first.stdout

    # A second run updates in place: no new user, the edited config is kept, a restart.
    (root / "etc/pipcam/pipcam.toml").write_text("[table]\nport = 8080\n")
    (app / "stale.txt").write_text("from an older version")
    log.write_text("")
    second = run_install(fake_pi)
    assert second.returncode == 0, second.stderr
    calls = log.read_text().splitlines()
    assert not any(c.startswith("useradd") for c in calls)
    assert "usermod --append --groups video,gpio pipcam" in calls
    assert not any(c.startswith("python3 -m venv") for c in calls)
    assert "systemctl restart pipcam.service" in calls
    assert (root / "etc/pipcam/pipcam.toml").read_text() == "[table]\nport = 8080\n"
    assert not (app / "stale.txt").exists()
    assert "keeping your" in second.stdout
    assert re.search(r"http://[\d.]+:8080/", second.stdout)


def test_installer_probes_the_imports_outside_the_callers_folder(
    fake_pi: dict[str, str], tmp_path: Path
) -> None:
    """``import lgpio`` leaves a FIFO in its working directory: not in the caller's (as root)."""
    caller = tmp_path / "caller"
    caller.mkdir()
    result = run_install(fake_pi, cwd=caller)
    assert result.returncode == 0, result.stderr
    probed = Path(fake_pi["STUB_LOG"] + ".cwd").read_text().splitlines()
    assert probed, "the import probe did not run"
    assert list(caller.iterdir()) == []
    for folder in probed:
        assert not Path(folder).exists(), f"the probe's folder {folder} is left behind"
