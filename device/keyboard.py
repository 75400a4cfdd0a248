"""The terminal's keyboard as the table's buttons, so the whole table can be tried on a laptop.

Each key drives the button's MockFactory pin as a finger would (low, then high; or low, wait
``hold_time``, high), so the keyboard goes through the very debounce and hold logic of the real
buttons. Where a button has no mock pin (real pins on a Pi, or a part not fitted) the event is
sent to the panel directly.

On a terminal, keys act at once (cbreak mode; the terminal is restored on close). A process in
the background of its terminal (``pipcam run &``) leaves the terminal alone, since the kernel
would stop it for touching it (SIGTTOU, SIGTTIN): the keys work once it is brought to the
foreground (``fg``). Anything that
starts with a character that is not a key (digits: ``1 1 5 2 3 4``) is echoed and collected up to
Enter, then handed to ``on_line``: with ``--camera none`` that is how dice are typed. From a pipe
or a file, input is read line by line: a line holding one key is that key, any other line goes to
``on_line``.
"""

from __future__ import annotations

import codecs
import logging
import os
import select
import signal
import sys
import termios
import threading
import time
import tty
from collections.abc import Callable
from types import TracebackType
from typing import Any, TextIO

from device.errors import DeviceClosedError, DeviceError
from device.panel import Panel

__all__ = [
    "KEYMAP",
    "KeyboardButtons",
    "help_text",
    "hold",
    "in_foreground",
    "keyboard_keys",
    "press",
    "trigger",
]

log = logging.getLogger(__name__)

KEYMAP: dict[str, str] = {
    "b": "bank",
    "c": "confirm",
    "u": "undo",
    "r": "redo",
    "k": "keep",
    "n": "new_game",
    "?": "help",
}
"""Key -> button event (the names on_button receives), plus ``help``."""
GESTURES: dict[str, tuple[str, bool]] = {
    "bank": ("bank", False),
    "confirm": ("confirm", False),
    "undo": ("undo", False),
    "redo": ("undo", True),
    "keep": ("keep", False),
    "new_game": ("confirm", True),
}
"""Event -> (button, held) that produces it."""
_MARGIN = 0.01
_DESCRIPTIONS = {
    "bank": "bank (press the bank button)",
    "confirm": "confirm: accept the offered choice",
    "undo": "undo",
    "redo": "redo (hold the undo button)",
    "keep": "keep",
    "new_game": "new game (hold the confirm button)",
    "help": "this help",
}


def keyboard_keys() -> dict[str, str]:
    """A copy of KEYMAP: key -> button event name."""
    return dict(KEYMAP)


def help_text() -> str:
    """What each key does, one key a line."""
    lines = [f"  {key}  {_DESCRIPTIONS[event]}" for key, event in KEYMAP.items()]
    lines.append("  digits then Enter: dice typed at the terminal, e.g. 1 1 5 2 3 4")
    return "Keys:\n" + "\n".join(lines) + "\n"


def in_foreground(fd: int) -> bool:
    """Whether this process may use terminal ``fd`` without being stopped: it is in the
    terminal's foreground process group, or the terminal is not its controlling one."""
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return True  # not our controlling terminal: job control does not apply to it


def _mock_pin(panel: Panel, button: str) -> object | None:
    if panel.closed:
        raise DeviceClosedError("the button panel is closed")
    if button not in panel.pins.buttons():
        return None
    pin = panel.button(button).pin
    return pin if hasattr(pin, "drive_low") else None


def press(panel: Panel, button: str) -> None:
    """Press and release ``button`` on its mock pin (drive low, then high)."""
    pin = _mock_pin(panel, button)
    if pin is None:
        raise DeviceError(f"the {button} button has no mock pin to drive")
    pin.drive_low()  # type: ignore[attr-defined]
    pin.drive_high()  # type: ignore[attr-defined]


def hold(panel: Panel, button: str, *, sleep: Callable[[float], None] = time.sleep) -> None:
    """Hold ``button`` down for the panel's hold_time on its mock pin, then release it."""
    pin = _mock_pin(panel, button)
    if pin is None:
        raise DeviceError(f"the {button} button has no mock pin to drive")
    pin.drive_low()  # type: ignore[attr-defined]
    try:
        sleep(panel.hold_time)
    finally:
        pin.drive_high()  # type: ignore[attr-defined]


def trigger(panel: Panel, event: str, *, sleep: Callable[[float], None] = time.sleep) -> None:
    """Produce button ``event`` with the gesture that makes it, or send it directly if no mock pin.

    Afterwards it waits out the bounce time (and a margin: clocks are floats), so that the next
    gesture is not taken for chatter of this one.
    """
    if event not in GESTURES:
        panel.emit(event)  # raises UnknownButton with the allowed names
        return
    button, held = GESTURES[event]
    if _mock_pin(panel, button) is None:
        panel.emit(event)
        return
    if held:
        hold(panel, button, sleep=sleep)
    else:
        press(panel, button)
    sleep(panel.bounce_time + _MARGIN)


class KeyboardButtons:
    """Reads keys from ``stream`` and presses the panel's buttons; a context manager.

    ``run()`` reads until end of input or close(); ``start()`` runs it on a daemon thread.
    ``cbreak`` (default: whether ``stream`` is a terminal) picks key-at-a-time reading over
    line reading; ``out`` receives the help and the echo of typed lines (default stdout);
    ``sleep`` times the holds, so tests pass a fake clock's; ``foreground`` tells whether the
    terminal may be used now (:func:`in_foreground`).
    """

    def __init__(
        self,
        panel: Panel,
        stream: TextIO,
        *,
        on_line: Callable[[str], None] | None = None,
        out: TextIO | None = None,
        sleep: Callable[[float], None] = time.sleep,
        cbreak: bool | None = None,
        foreground: Callable[[int], bool] = in_foreground,
        poll: float = 0.1,
    ) -> None:
        self._panel = panel
        self._stream = stream
        self._on_line = on_line
        self._out = sys.stdout if out is None else out
        self._sleep = sleep
        self.cbreak = stream.isatty() if cbreak is None else cbreak
        self._buffer = ""
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._saved: list[Any] | None = None
        self._thread: threading.Thread | None = None
        self._foreground = foreground
        self._poll = poll
        self._said_background = False

    def start(self) -> None:
        """Read keys on a daemon thread until end of input or close()."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self.run, name="keyboard-buttons", daemon=True)
        self._thread.start()

    def run(self) -> None:
        """Read keys until end of input or close(), acting on each; restores the terminal."""
        try:
            if self.cbreak:
                self._run_cbreak()
            else:
                self._run_lines()
        except DeviceClosedError:
            pass  # the table is shutting down
        finally:
            self._restore()

    def close(self) -> None:
        """Stop reading and restore the terminal; calling it again does nothing."""
        self._stop.set()
        self._restore()
        thread = self._thread
        if self.cbreak and thread is not None and thread is not threading.current_thread():
            # Only the cbreak loop polls; a blocking readline() cannot be interrupted.
            thread.join(timeout=1.0)

    def __enter__(self) -> KeyboardButtons:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run_lines(self) -> None:
        for line in iter(self._stream.readline, ""):
            if self._stop.is_set():
                return
            text = line.strip()
            if text in KEYMAP:
                self._act(text)
            elif text:
                self._line(text)

    def _wait_for_foreground(self, fd: int) -> bool:
        """Wait, without touching the terminal, until this process is in its foreground; False
        if closed meanwhile. Said once: a background table runs without its keys."""
        while not self._foreground(fd):
            if not self._said_background:
                self._said_background = True
                self._echo(
                    "pipcam: running in the background, so the keys do nothing here; bring it"
                    " to the foreground (fg) to use them\n"
                )
            if self._stop.wait(self._poll):
                return False
        return not self._stop.is_set()

    def _run_cbreak(self) -> None:
        fd = self._stream.fileno()
        if not self._wait_for_foreground(fd):
            return
        with self._lock:
            if self._stop.is_set():
                return
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd, termios.TCSANOW)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        while not self._stop.is_set():
            if not self._wait_for_foreground(fd):  # sent to the background (Ctrl-Z, bg)
                return
            ready, _, _ = select.select([fd], [], [], self._poll)
            if not ready:
                continue
            data = os.read(fd, 256)
            if not data:
                return
            chunk = decoder.decode(data)
            if "\x1b" in chunk:
                # An escape sequence (arrow keys, ...) is no key of ours, and Esc clears the line.
                chunk = chunk[: chunk.index("\x1b")]
                self._buffer = ""
                self._echo("\r\x1b[K")
            for char in chunk:
                if not self._key(char):
                    return

    def _key(self, char: str) -> bool:
        """Handle one key in cbreak mode; False at end of input (Ctrl-D on an empty line)."""
        if char in "\r\n":
            if self._buffer:
                line, self._buffer = self._buffer, ""
                self._echo("\n")
                self._line(line.strip())
        elif char in "\x7f\b":
            if self._buffer:
                self._buffer = self._buffer[:-1]
                self._echo("\b \b")
        elif char == "\x04":
            return bool(self._buffer)
        elif not self._buffer and char in KEYMAP:
            self._act(char)
        elif char.isprintable() and (self._buffer or not char.isspace()):
            self._buffer += char
            self._echo(char)
        return True

    def _act(self, key: str) -> None:
        event = KEYMAP[key]
        if event == "help":
            self._echo(help_text())
            return
        trigger(self._panel, event, sleep=self._sleep)

    def _line(self, line: str) -> None:
        if self._on_line is None:
            self._echo(f"typed lines are not used here: {line!r}; press ? for the keys\n")
            return
        try:
            self._on_line(line)
        except Exception:
            log.exception("the handler of typed line %r failed", line)

    def _echo(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _restore(self) -> None:
        with self._lock:
            if self._saved is not None:
                # Restored also from the background (Ctrl-Z, bg, then a stop): with SIGTTOU
                # blocked the kernel lets the change through instead of stopping the process.
                blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
                try:
                    termios.tcsetattr(self._stream.fileno(), termios.TCSADRAIN, self._saved)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                self._saved = None
