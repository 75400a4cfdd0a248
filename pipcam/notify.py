"""systemd's notify protocol (``Type=notify``): readiness, status, stopping and the watchdog.

A few lines over an ``AF_UNIX`` datagram socket instead of a dependency: systemd hands the service
the socket's address in ``$NOTIFY_SOCKET`` (a path, or ``@name`` for the abstract namespace) and
the watchdog period in ``$WATCHDOG_USEC``. Outside systemd (a laptop, the tests) the variables are
unset and every call is a harmless no-op, so ``pipcam run`` needs no "am I a service?" switch.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Self

__all__ = [
    "Heartbeat",
    "NotifyError",
    "Notifier",
    "WatchdogFeeder",
    "watchdog_interval_seconds",
]

NOTIFY_SOCKET_ENV = "NOTIFY_SOCKET"
WATCHDOG_USEC_ENV = "WATCHDOG_USEC"
WATCHDOG_PID_ENV = "WATCHDOG_PID"

log = logging.getLogger(__name__)


class NotifyError(RuntimeError):
    """``$NOTIFY_SOCKET`` names no socket we can speak to, or a closed notifier was used."""


def _socket_address(value: str) -> str:
    """The ``sendto`` address for a ``$NOTIFY_SOCKET`` value; ``@`` marks the abstract namespace."""
    if value.startswith("@"):
        # Linux spells abstract socket names with a leading NUL byte; systemd writes it as "@".
        return "\0" + value[1:]
    if value.startswith("/"):
        return value
    raise NotifyError(
        f"{NOTIFY_SOCKET_ENV}={value!r} is neither a socket path nor an @abstract name; "
        "pipcam speaks only AF_UNIX notify sockets: unset it or run under systemd"
    )


class Notifier:
    """Sends sd_notify messages to ``$NOTIFY_SOCKET``; a no-op when the variable is unset.

    A context manager; ``close()`` may be called any number of times, and sending after it
    raises :class:`NotifyError`.
    """

    def __init__(self, address: str | None = None, *, env: Mapping[str, str] | None = None) -> None:
        if address is None:
            address = (os.environ if env is None else env).get(NOTIFY_SOCKET_ENV) or None
        self.address = address
        self._target = None if address is None else _socket_address(address)
        self._socket: socket.socket | None = None
        if self._target is not None:
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        self._closed = False
        # Lets a failure be logged once per outage instead of every watchdog tick.
        self._failing = False

    @property
    def enabled(self) -> bool:
        """True when messages go to a socket (we run under systemd with ``Type=notify``)."""
        return self._target is not None

    def send(self, **fields: str) -> bool:
        """Send ``KEY=value`` fields in one datagram; True if it was delivered to the socket."""
        if self._closed:
            raise NotifyError("the systemd notifier is closed")
        if self._socket is None or self._target is None:
            return False
        message = "\n".join(f"{key}={value}" for key, value in fields.items())
        try:
            self._socket.sendto(message.encode(), self._target)
        except OSError as error:
            # systemd going away (shutdown, daemon-reexec) must not take the table down with it;
            # a watchdog that is not fed restarts us anyway if this persists.
            if not self._failing:
                log.warning("cannot notify systemd at %s: %s", self.address, error)
            self._failing = True
            return False
        if self._failing:
            log.info("notifying systemd at %s again", self.address)
        self._failing = False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Tell systemd the service is up (``READY=1``), with an optional status line."""
        if status is None:
            return self.send(READY="1")
        return self.send(READY="1", STATUS=_one_line(status))

    def status(self, text: str) -> bool:
        """Set the line ``systemctl status`` shows for the service."""
        return self.send(STATUS=_one_line(text))

    def watchdog(self) -> bool:
        """Feed the watchdog (``WATCHDOG=1``): the service is alive."""
        return self.send(WATCHDOG="1")

    def stopping(self, status: str | None = None) -> bool:
        """Tell systemd a clean shutdown has begun (``STOPPING=1``)."""
        if status is None:
            return self.send(STOPPING="1")
        return self.send(STOPPING="1", STATUS=_one_line(status))

    def close(self) -> None:
        """Close the socket; harmless when already closed."""
        self._closed = True
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else (self.address or "disabled")
        return f"<Notifier {state}>"


def _one_line(text: str) -> str:
    """A status text fit for one ``STATUS=`` field: a newline would start a new field."""
    return " ".join(text.splitlines())


def watchdog_interval_seconds(
    *, env: Mapping[str, str] | None = None, pid: int | None = None
) -> float | None:
    """How often to feed the watchdog (half of ``$WATCHDOG_USEC``), or None when it is off.

    ``$WATCHDOG_PID``, when set, must be our process id: the variables may have been inherited
    from a parent that systemd watches instead.

    >>> watchdog_interval_seconds(env={"WATCHDOG_USEC": "30000000"})
    15.0
    >>> watchdog_interval_seconds(env={}) is None
    True
    """
    env = os.environ if env is None else env
    usec = env.get(WATCHDOG_USEC_ENV)
    if not usec:
        return None
    watched = env.get(WATCHDOG_PID_ENV)
    if watched and watched != str(os.getpid() if pid is None else pid):
        return None
    try:
        period = int(usec)
    except ValueError:
        period = 0
    if period <= 0:
        log.warning(
            "ignoring %s=%r: not a positive number of microseconds", WATCHDOG_USEC_ENV, usec
        )
        return None
    return period / 2 / 1_000_000


class Heartbeat:
    """Proof of life from a loop: call :meth:`beat` every iteration, call the object to check it.

    ``heartbeat()`` is True while the last beat is at most ``max_age`` seconds old, which makes it
    the ``healthy`` callback of :class:`WatchdogFeeder`. Beat once per loop iteration, not per
    frame, so a loop that is waiting for an unplugged camera still counts as alive.
    """

    def __init__(self, max_age: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if max_age <= 0:
            raise ValueError(f"max_age must be positive seconds, not {max_age!r}")
        self.max_age = max_age
        self._clock = clock
        self._last = clock()

    def beat(self) -> None:
        """Record that the loop is alive now."""
        self._last = self._clock()

    def age(self) -> float:
        """Seconds since the last beat."""
        return self._clock() - self._last

    def __call__(self) -> bool:
        return self.age() <= self.max_age


class WatchdogFeeder:
    """A thread that sends ``WATCHDOG=1`` every ``interval`` seconds while ``healthy()`` is True.

    When ``healthy()`` turns False (or raises), feeding stops: systemd then kills and restarts the
    service after ``WatchdogSec``, which is the point, since a hung camera loop cannot recover by
    itself. ``interval=None`` (no watchdog configured) makes the feeder do nothing.

    ``clock`` and ``sleep`` are injectable for tests; by default the sleep waits on the stop event,
    so :meth:`stop` returns at once instead of after a whole interval. A feeder runs once: start
    it, stop it, and make a new one if needed.
    """

    def __init__(
        self,
        notifier: Notifier,
        interval: float | None,
        *,
        healthy: Callable[[], bool] = lambda: True,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], object] | None = None,
    ) -> None:
        if interval is not None and interval <= 0:
            raise ValueError(f"watchdog interval must be positive seconds, not {interval!r}")
        self.notifier = notifier
        self.interval = interval
        self._healthy = healthy
        self._clock = clock
        self._stopped = threading.Event()
        self._sleep = self._stopped.wait if sleep is None else sleep
        self._thread: threading.Thread | None = None
        self._starving = False
        self.fed = 0

    def tick(self) -> bool:
        """Check health once and feed the watchdog if healthy; True if it was fed."""
        try:
            healthy = self._healthy()
        except Exception:
            log.exception("health check failed; not feeding the watchdog")
            healthy = False
        if not healthy:
            if not self._starving:
                log.warning(
                    "the table stopped responding: no longer feeding the watchdog, "
                    "systemd restarts pipcam unless it recovers"
                )
                self.notifier.status("not responding: waiting for the watchdog to restart pipcam")
            self._starving = True
            return False
        if self._starving:
            log.info("the table responds again: feeding the watchdog")
            self.notifier.status("running")
        self._starving = False
        self.notifier.watchdog()
        self.fed += 1
        return True

    def _run(self, interval: float) -> None:
        # Deadlines instead of a fixed sleep: a slow health check must not stretch the period.
        due = self._clock()
        while not self._stopped.is_set():
            self.tick()
            due += interval
            delay = due - self._clock()
            if delay < 0:
                # Suspended or far behind: feed next at once rather than in a burst of catch-ups.
                due = self._clock()
                delay = 0.0
            self._sleep(delay)

    @property
    def running(self) -> bool:
        """True while the feeding thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Start feeding in a daemon thread; does nothing when no watchdog is configured."""
        if self._thread is not None:
            raise RuntimeError("the watchdog feeder was already started")
        if self.interval is None:
            return
        self._thread = threading.Thread(
            target=self._run, args=(self.interval,), name="pipcam-watchdog", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop feeding and wait for the thread; harmless when already stopped or never started."""
        self._stopped.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
