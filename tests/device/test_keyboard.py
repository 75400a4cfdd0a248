"""The keyboard as buttons: keys drive mock pins, typed lines reach on_line, the tty recovers."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from device.errors import DeviceClosedError, DeviceError, UnknownButton
from device.keyboard import (
    KEYMAP,
    KeyboardButtons,
    help_text,
    hold,
    keyboard_keys,
    press,
    trigger,
)
from device.panel import Panel
from device.pins import DEFAULT_PINS, PinMap
from tests.device.support import FakeClock, Recorder, mock_factory

__all__ = ["mock_factory"]  # a fixture, used by name


@pytest.fixture
def clock() -> FakeClock:
    """The fake clock shared by the panel and the keyboard's sleep."""
    return FakeClock()


@pytest.fixture
def events() -> Recorder:
    """The panel's on_button."""
    return Recorder()


@pytest.fixture
def panel(mock_factory: Any, clock: FakeClock, events: Recorder) -> Iterator[Panel]:
    """The default panel on mock pins, timed by the fake clock."""
    with Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=events, clock=clock) as p:
        yield p


def read(panel: Panel, text: str, clock: FakeClock, **options: Any) -> str:
    """Feed ``text`` as line input; return what the reader wrote."""
    out = io.StringIO()
    KeyboardButtons(panel, io.StringIO(text), out=out, sleep=clock.sleep, **options).run()
    return out.getvalue()


def wait_for(condition: Callable[[], bool], *, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not condition():
        time.sleep(0.002)
    return condition()


def test_keymap() -> None:
    assert KEYMAP == {
        "b": "bank",
        "c": "confirm",
        "u": "undo",
        "r": "redo",
        "k": "keep",
        "n": "new_game",
        "?": "help",
    }
    keys = keyboard_keys()
    keys["x"] = "roll"
    assert "x" not in KEYMAP


def test_keys_press_the_buttons(panel: Panel, clock: FakeClock, events: Recorder) -> None:
    read(panel, "b\nc\nu\nk\n", clock)
    assert events.events == ["bank", "confirm", "undo", "keep"]
    for name in ("bank", "confirm", "undo", "keep"):
        # Floating at first, then pulled up; pressed (low) once and released.
        panel.button(name).pin.assert_states([False, True, False, True])
        assert len(panel.button(name).pin.states) == 4


def test_the_same_key_twice_is_two_presses(
    panel: Panel, clock: FakeClock, events: Recorder
) -> None:
    read(panel, "b\nb\n", clock)
    assert events.events == ["bank", "bank"]
    # The bounce time is waited out, with a margin, on the injected clock.
    assert clock.slept == pytest.approx([0.06, 0.06])


@pytest.mark.parametrize(
    ("key", "button", "event"), [("r", "undo", "redo"), ("n", "confirm", "new_game")]
)
def test_hold_keys_hold_the_button_for_the_hold_time(
    panel: Panel, clock: FakeClock, events: Recorder, key: str, button: str, event: str
) -> None:
    read(panel, f"{key}\n", clock)
    assert events.events == [event]
    assert clock.slept == pytest.approx([1.0, 0.06])
    pin = panel.button(button).pin
    pin.assert_states([False, True, False, True])
    assert len(pin.states) == 4


def test_hold_with_real_sleep_goes_through_gpiozero_hold_timer(
    mock_factory: Any, events: Recorder
) -> None:
    with Panel(DEFAULT_PINS, pin_factory=mock_factory, hold_time=0.05, on_button=events) as p:
        KeyboardButtons(p, io.StringIO("r\nb\n"), out=io.StringIO()).run()
    assert events.events == ["redo", "bank"]


def test_typed_lines_go_to_on_line(panel: Panel, clock: FakeClock, events: Recorder) -> None:
    lines = Recorder()
    read(panel, "b\n  1 1 5 2 3 4 \n\nu\n", clock, on_line=lines)
    assert lines.events == ["1 1 5 2 3 4"]
    assert events.events == ["bank", "undo"]


def test_typed_lines_without_on_line_are_answered(panel: Panel, clock: FakeClock) -> None:
    out = read(panel, "3 3\n", clock)
    assert out == "typed lines are not used here: '3 3'; press ? for the keys\n"


def test_a_failing_on_line_is_logged_and_reading_goes_on(
    panel: Panel, clock: FakeClock, events: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(line: str) -> None:
        raise ValueError(line)

    with caplog.at_level(logging.ERROR, logger="device.keyboard"):
        read(panel, "7 7\nb\n", clock, on_line=broken)
    assert events.events == ["bank"]
    assert "the handler of typed line '7 7' failed" in caplog.text


def test_question_mark_prints_the_keys(panel: Panel, clock: FakeClock, events: Recorder) -> None:
    out = read(panel, "?\n", clock)
    assert out == help_text()
    assert "  r  redo (hold the undo button)\n" in out
    assert "e.g. 1 1 5 2 3 4" in out
    assert events.events == []


def test_a_key_of_a_button_not_fitted_sends_the_event(
    mock_factory: Any, clock: FakeClock, events: Recorder
) -> None:
    with Panel(PinMap(keep=None), pin_factory=mock_factory, on_button=events, clock=clock) as p:
        read(p, "k\n", clock)
        with pytest.raises(DeviceError, match="the keep button has no mock pin to drive"):
            press(p, "keep")
    assert events.events == ["keep"]


def test_press_and_hold_helpers(panel: Panel, clock: FakeClock, events: Recorder) -> None:
    press(panel, "bank")
    clock.now += 1
    hold(panel, "undo", sleep=clock.sleep)
    clock.now += 1
    hold(panel, "bank", sleep=clock.sleep)
    assert events.events == ["bank", "redo", "bank"]
    with pytest.raises(UnknownButton):
        trigger(panel, "roll", sleep=clock.sleep)


def test_reading_stops_quietly_when_the_panel_closes(
    mock_factory: Any, clock: FakeClock, events: Recorder
) -> None:
    p = Panel(DEFAULT_PINS, pin_factory=mock_factory, on_button=events, clock=clock)
    p.close()
    read(p, "b\nb\n", clock)
    assert events.events == []
    with pytest.raises(DeviceClosedError):
        press(p, "bank")


def test_start_reads_on_a_thread(panel: Panel, clock: FakeClock, events: Recorder) -> None:
    with KeyboardButtons(panel, io.StringIO("c\n"), out=io.StringIO(), sleep=clock.sleep) as keys:
        keys.start()
        assert wait_for(lambda: events.events == ["confirm"])


# --- a real terminal: a pseudo-terminal pair, so cbreak mode and its restoring are exercised.


@pytest.fixture
def terminal() -> Iterator[tuple[int, io.TextIOWrapper]]:
    """(master fd, slave stream) of a fresh pseudo-terminal."""
    master, slave = os.openpty()
    stream = open(slave, encoding="utf-8")  # noqa: SIM115  # closed below
    try:
        yield master, stream
    finally:
        stream.close()
        os.close(master)


def test_terminal_keys_act_at_once_and_the_mode_is_restored(
    panel: Panel, clock: FakeClock, events: Recorder, terminal: tuple[int, io.TextIOWrapper]
) -> None:
    master, stream = terminal
    before = termios.tcgetattr(stream.fileno())
    lines = Recorder()
    out = io.StringIO()
    keys = KeyboardButtons(panel, stream, on_line=lines, out=out, sleep=clock.sleep)
    assert keys.cbreak
    keys.start()
    os.write(master, b"b")
    assert wait_for(lambda: events.events == ["bank"])
    assert not termios.tcgetattr(stream.fileno())[3] & termios.ICANON
    os.write(master, b"12\x7f3 4\rr")
    assert wait_for(lambda: events.events == ["bank", "redo"])
    assert lines.events == ["13 4"]
    assert out.getvalue() == "12\b \b3 4\n"
    keys.close()
    assert termios.tcgetattr(stream.fileno()) == before
    keys.close()


def test_terminal_escape_sequences_and_ctrl_d(
    panel: Panel, clock: FakeClock, events: Recorder, terminal: tuple[int, io.TextIOWrapper]
) -> None:
    master, stream = terminal
    before = termios.tcgetattr(stream.fileno())
    lines = Recorder()
    keys = KeyboardButtons(panel, stream, on_line=lines, out=io.StringIO(), sleep=clock.sleep)
    done = threading.Event()

    def run() -> None:
        keys.run()
        done.set()

    threading.Thread(target=run, daemon=True).start()
    os.write(master, b"55")
    time.sleep(0.05)
    os.write(master, b"\x1b[A")  # an arrow key: clears the typed line, presses nothing
    time.sleep(0.05)
    os.write(master, b"6\r\x04")
    assert done.wait(2.0)
    assert lines.events == ["6"]
    assert events.events == []
    assert termios.tcgetattr(stream.fileno()) == before


def test_in_the_background_the_terminal_is_left_alone_until_the_foreground(
    panel: Panel, clock: FakeClock, events: Recorder, terminal: tuple[int, io.TextIOWrapper]
) -> None:
    """``pipcam run &``: changing the terminal's mode from the background would stop the process
    (SIGTTOU), so the keys wait, said once, until the table is brought to the foreground."""
    master, stream = terminal
    before = termios.tcgetattr(stream.fileno())
    front = threading.Event()
    out = io.StringIO()
    keys = KeyboardButtons(
        panel,
        stream,
        out=out,
        sleep=clock.sleep,
        foreground=lambda _fd: front.is_set(),
        poll=0.01,
    )
    keys.start()
    time.sleep(0.1)
    assert termios.tcgetattr(stream.fileno()) == before  # still line mode: untouched
    assert out.getvalue() == (
        "pipcam: running in the background, so the keys do nothing here; bring it to the"
        " foreground (fg) to use them\n"
    )
    front.set()  # fg
    assert wait_for(lambda: not termios.tcgetattr(stream.fileno())[3] & termios.ICANON)
    os.write(master, b"b")
    assert wait_for(lambda: events.events == ["bank"])
    keys.close()
    assert termios.tcgetattr(stream.fileno()) == before


def test_a_terminal_that_is_not_the_controlling_one_counts_as_foreground(
    terminal: tuple[int, io.TextIOWrapper],
) -> None:
    from device.keyboard import in_foreground

    _master, stream = terminal
    assert in_foreground(stream.fileno())


# A background job of a real controlling terminal: a child of pty.fork() is the session leader
# in the foreground; its own child in a process group of its own is a background job there.
BACKGROUND_JOB = """
import os, pty, sys, time, io
pid, master = pty.fork()
if pid == 0:
    g = os.fork()
    if g == 0:
        os.setpgid(0, 0)  # a background job of this terminal
        from gpiozero.pins.mock import MockFactory
        from device.panel import Panel
        from device.pins import PinMap
        from device.keyboard import KeyboardButtons
        with Panel(PinMap(), pin_factory=MockFactory(), on_button=print) as panel:
            out = io.StringIO()
            k = KeyboardButtons(panel, sys.stdin, out=out)
            k.start(); time.sleep(0.5); k.close()
            os.write(2, out.getvalue().encode())
        os._exit(0)
    _, status = os.waitpid(g, os.WUNTRACED)
    print("stopped" if os.WIFSTOPPED(status) else f"exit {os.WEXITSTATUS(status)}")
    if os.WIFSTOPPED(status):
        os.kill(g, 9)
    os._exit(0)
out = b""
deadline = time.time() + 10
while time.time() < deadline:
    try:
        chunk = os.read(master, 1024)
    except OSError:
        break
    if not chunk: break
    out += chunk
os.waitpid(pid, 0)
print(out.decode())
"""


def test_a_background_job_is_not_stopped_by_the_keyboard() -> None:
    """``pipcam run &``: before, cbreak mode from the background stopped it (SIGTTOU)."""
    result = subprocess.run(
        [sys.executable, "-c", BACKGROUND_JOB],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert result.returncode == 0, result.stderr
    assert "exit 0" in result.stdout.splitlines(), result.stdout
    assert "running in the background, so the keys do nothing here" in result.stdout
