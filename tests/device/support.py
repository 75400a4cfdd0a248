"""What the device tests share: a fresh MockFactory per test, a fake clock, an event recorder.

(A conftest.py here would clash with tests/vision/conftest.py as the module ``conftest`` for mypy,
so the test modules import these by name.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory


class FakeClock:
    """A monotonic clock that moves only when the test (or the code's sleep) moves it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        """Sleep without waiting: the clock jumps."""
        self.slept.append(seconds)
        self.now += seconds


class Recorder:
    """Collects events (or typed lines) from whichever thread sends them, and which thread."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.threads: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, event: str) -> None:
        with self._lock:
            self.events.append(event)
            self.threads.append(threading.current_thread().name)


@pytest.fixture
def mock_factory() -> Iterator[Any]:
    """A fresh MockFactory per test: it keeps pins reserved after its devices close."""
    factory = MockFactory()
    yield factory
    factory.reset()
    factory.close()
