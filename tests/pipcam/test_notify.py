"""The sd_notify client against a fake systemd: a datagram socket that the test reads."""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipcam.notify import (
    Heartbeat,
    Notifier,
    NotifyError,
    WatchdogFeeder,
    watchdog_interval_seconds,
)


class FakeSystemd:
    """The receiving end of ``$NOTIFY_SOCKET``: collects the datagrams pipcam sends."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        bind_to = "\0" + address[1:] if address.startswith("@") else address
        self.socket.bind(bind_to)
        self.socket.settimeout(2)

    def receive(self) -> str:
        """The next message, or a timeout error when none came."""
        return self.socket.recv(4096).decode()

    def pending(self) -> list[str]:
        """Every message waiting now, without blocking."""
        self.socket.settimeout(0)
        out = []
        try:
            while True:
                out.append(self.socket.recv(4096).decode())
        except BlockingIOError:
            pass
        finally:
            self.socket.settimeout(2)
        return out


@pytest.fixture(autouse=True)
def _outside_systemd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never notify the systemd that may be running the test suite itself."""
    for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSystemd]:
    path = tmp_path / "notify"
    assert len(str(path)) < 100, "AF_UNIX paths are limited to 108 bytes"
    fake = FakeSystemd(str(path))
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    yield fake
    fake.socket.close()


@pytest.fixture
def abstract_systemd(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSystemd]:
    fake = FakeSystemd(f"@pipcam-test-{uuid.uuid4().hex}")
    monkeypatch.setenv("NOTIFY_SOCKET", fake.address)
    yield fake
    fake.socket.close()


def test_ready_watchdog_status_stopping_arrive_in_order(systemd: FakeSystemd) -> None:
    with Notifier() as notifier:
        assert notifier.enabled
        assert notifier.ready()
        assert notifier.watchdog()
        assert notifier.status("playing general, round 3")
        assert notifier.stopping()
    assert [systemd.receive() for _ in range(4)] == [
        "READY=1",
        "WATCHDOG=1",
        "STATUS=playing general, round 3",
        "STOPPING=1",
    ]


def test_ready_with_status_is_one_datagram(systemd: FakeSystemd) -> None:
    with Notifier() as notifier:
        notifier.ready("serving http://192.168.1.20:8000/")
        notifier.stopping("saving the game")
    assert systemd.receive() == "READY=1\nSTATUS=serving http://192.168.1.20:8000/"
    assert systemd.receive() == "STOPPING=1\nSTATUS=saving the game"


def test_status_with_newlines_stays_one_field(systemd: FakeSystemd) -> None:
    with Notifier() as notifier:
        notifier.status("camera lost\nwaiting for it")
    assert systemd.receive() == "STATUS=camera lost waiting for it"


def test_abstract_socket_name(abstract_systemd: FakeSystemd) -> None:
    with Notifier() as notifier:
        assert notifier.ready()
    assert abstract_systemd.receive() == "READY=1"


def test_explicit_address_wins_over_environment(tmp_path: Path, systemd: FakeSystemd) -> None:
    other = FakeSystemd(str(tmp_path / "other"))
    try:
        with Notifier(other.address) as notifier:
            notifier.watchdog()
        assert other.receive() == "WATCHDOG=1"
        assert systemd.pending() == []
    finally:
        other.socket.close()


def test_no_op_without_notify_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    with Notifier() as notifier:
        assert not notifier.enabled
        assert notifier.ready("up") is False
        assert notifier.watchdog() is False
        assert notifier.stopping() is False
    assert repr(notifier) == "<Notifier closed>"


def test_env_mapping_is_used_instead_of_os_environ(systemd: FakeSystemd) -> None:
    with Notifier(env={}) as notifier:
        assert not notifier.enabled
    with Notifier(env={"NOTIFY_SOCKET": systemd.address}) as notifier:
        assert notifier.ready()
    assert systemd.pending() == ["READY=1"]


def test_unsupported_socket_kind_is_refused() -> None:
    with pytest.raises(NotifyError) as raised:
        Notifier(env={"NOTIFY_SOCKET": "vsock:2:1234"})
    assert str(raised.value) == (
        "NOTIFY_SOCKET='vsock:2:1234' is neither a socket path nor an @abstract name; "
        "pipcam speaks only AF_UNIX notify sockets: unset it or run under systemd"
    )


def test_close_is_idempotent_and_sending_after_it_fails(systemd: FakeSystemd) -> None:
    notifier = Notifier()
    notifier.close()
    notifier.close()
    with pytest.raises(NotifyError, match="^the systemd notifier is closed$"):
        notifier.watchdog()
    assert systemd.pending() == []


def test_vanished_socket_is_logged_once_and_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gone = tmp_path / "gone"
    caplog.set_level(logging.INFO, logger="pipcam.notify")
    with Notifier(str(gone)) as notifier:
        assert notifier.watchdog() is False
        assert notifier.watchdog() is False
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1
        assert warnings[0].getMessage().startswith(f"cannot notify systemd at {gone}: ")
        back = FakeSystemd(str(gone))
        try:
            assert notifier.watchdog() is True
            assert back.receive() == "WATCHDOG=1"
        finally:
            back.socket.close()
    assert caplog.records[-1].getMessage() == f"notifying systemd at {gone} again"


# --- the watchdog period -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({"WATCHDOG_USEC": "30000000"}, 15.0, id="30s-fed-every-15s"),
        pytest.param({"WATCHDOG_USEC": "1000"}, 0.0005, id="1ms"),
        pytest.param({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"}, 15.0, id="our-pid"),
        pytest.param({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, None, id="other-pid"),
        pytest.param({}, None, id="unset"),
        pytest.param({"WATCHDOG_USEC": ""}, None, id="empty"),
        pytest.param({"WATCHDOG_USEC": "0"}, None, id="zero"),
        pytest.param({"WATCHDOG_USEC": "-5"}, None, id="negative"),
        pytest.param({"WATCHDOG_USEC": "30s"}, None, id="not-a-number"),
    ],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert watchdog_interval_seconds(env=env, pid=4242) == expected


def test_watchdog_interval_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "8000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval_seconds() == 4.0
    monkeypatch.delenv("WATCHDOG_USEC")
    assert watchdog_interval_seconds() is None


# --- health and feeding --------------------------------------------------------------------------


class FakeClock:
    """A monotonic clock that only moves when the test (or the fake sleep) moves it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_heartbeat_goes_stale_after_max_age() -> None:
    clock = FakeClock()
    heartbeat = Heartbeat(5.0, clock=clock)
    assert heartbeat()
    clock.now += 5.0
    assert heartbeat()
    clock.now += 0.5
    assert not heartbeat()
    assert heartbeat.age() == 5.5
    heartbeat.beat()
    assert heartbeat()


def test_heartbeat_refuses_a_non_positive_age() -> None:
    with pytest.raises(ValueError, match=r"^max_age must be positive seconds, not 0$"):
        Heartbeat(0)


def test_tick_feeds_only_while_healthy(systemd: FakeSystemd) -> None:
    clock = FakeClock()
    heartbeat = Heartbeat(20.0, clock=clock)
    with Notifier() as notifier:
        feeder = WatchdogFeeder(notifier, 15.0, healthy=heartbeat, clock=clock)
        assert feeder.tick()
        clock.now += 21  # the camera loop hung: no beat for longer than max_age
        assert not feeder.tick()
        assert not feeder.tick()
        heartbeat.beat()
        assert feeder.tick()
    assert systemd.pending() == [
        "WATCHDOG=1",
        "STATUS=not responding: waiting for the watchdog to restart pipcam",
        "STATUS=running",
        "WATCHDOG=1",
    ]
    assert feeder.fed == 2


def test_a_failing_health_check_counts_as_unhealthy(
    systemd: FakeSystemd, caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> bool:
        raise RuntimeError("camera loop state unreadable")

    with Notifier() as notifier:
        feeder = WatchdogFeeder(notifier, 15.0, healthy=broken)
        assert not feeder.tick()
    assert "WATCHDOG=1" not in systemd.pending()
    assert "health check failed; not feeding the watchdog" in caplog.messages


def test_feeder_thread_feeds_on_schedule_and_stops_when_unhealthy(systemd: FakeSystemd) -> None:
    clock = FakeClock()
    heartbeat = Heartbeat(40.0, clock=clock)
    sleeps: list[float] = []
    done = threading.Event()

    def fake_sleep(seconds: float) -> None:
        # Time passes only here; the camera loop beats for the first 3 periods, then hangs.
        sleeps.append(seconds)
        clock.now += seconds
        if len(sleeps) <= 3:
            heartbeat.beat()
        if len(sleeps) == 8:
            feeder.stop()
            done.set()

    with Notifier() as notifier:
        feeder = WatchdogFeeder(notifier, 15.0, healthy=heartbeat, clock=clock, sleep=fake_sleep)
        feeder.start()
        assert done.wait(5), "the feeder thread did not run"
        feeder.stop()
        assert not feeder.running
    messages = systemd.pending()
    # Beats at t=15, 30, 45 keep it healthy up to t=85; ticks at 0..90 in steps of 15.
    assert messages.count("WATCHDOG=1") == 6
    assert messages[-1] == "STATUS=not responding: waiting for the watchdog to restart pipcam"
    assert sleeps == [15.0] * 8


def test_feeder_keeps_its_schedule_when_a_tick_is_slow() -> None:
    clock = FakeClock()
    sleeps: list[float] = []

    def slow_health() -> bool:
        clock.now += 4.0  # a health check that takes 4 s must not stretch the 15 s period
        return True

    def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds
        if len(sleeps) == 3:
            feeder.stop()
            done.set()

    done = threading.Event()
    with Notifier() as notifier:
        feeder = WatchdogFeeder(notifier, 15.0, healthy=slow_health, clock=clock, sleep=fake_sleep)
        with feeder:
            assert done.wait(5), "the feeder thread did not run"
    assert sleeps == [11.0, 11.0, 11.0]


def test_feeder_catches_up_without_a_burst_after_a_long_stall() -> None:
    clock = FakeClock()
    sleeps: list[float] = []
    stall = iter([40.0])

    def stalling_health() -> bool:
        clock.now += next(stall, 0.0)  # e.g. the Pi was suspended for 40 s in the first check
        return True

    def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds
        if len(sleeps) == 3:
            feeder.stop()
            done.set()

    done = threading.Event()
    with Notifier() as notifier:
        feeder = WatchdogFeeder(
            notifier, 15.0, healthy=stalling_health, clock=clock, sleep=fake_sleep
        )
        with feeder:
            assert done.wait(5), "the feeder thread did not run"
    assert sleeps == [0.0, 15.0, 15.0]


def test_real_sleep_stops_promptly(systemd: FakeSystemd) -> None:
    with Notifier() as notifier:
        feeder = WatchdogFeeder(notifier, 3600.0)
        feeder.start()
        assert systemd.receive() == "WATCHDOG=1"
        feeder.stop()  # would hang for an hour if the sleep ignored the stop request
        assert not feeder.running
        feeder.stop()


def test_feeder_without_watchdog_does_nothing(systemd: FakeSystemd) -> None:
    with Notifier() as notifier, WatchdogFeeder(notifier, None) as feeder:
        assert not feeder.running
    assert systemd.pending() == []


def test_feeder_starts_once() -> None:
    with (
        Notifier(env={}) as notifier,
        WatchdogFeeder(notifier, 3600.0) as feeder,
        pytest.raises(RuntimeError, match="^the watchdog feeder was already started$"),
    ):
        feeder.start()


def test_feeder_refuses_a_non_positive_interval() -> None:
    with (
        Notifier(env={}) as notifier,
        pytest.raises(ValueError, match=r"^watchdog interval must be positive seconds, not 0.0$"),
    ):
        WatchdogFeeder(notifier, 0.0)
