"""``pipcam tune``: tune the face model on the photos this table kept, and read with it only if it
reads the table's own held-out photos better.

One command for what ``pipcam photos`` and ``python -m vision.train.tune`` do in two: the kept
photos are exported (labelled with what the players left standing) into ``DATA/tune/photos``,
the shipped model is tuned on the games the export trains on, both models read the games it
holds out, and the tuned one is installed as ``DATA/dice_faces.onnx`` when it costs the players
at least 2 less there (``vision.evaluate.reading_cost``: a wrong value 3, a die not read 1).
``pipcam run`` reads with that file from its next roll; ``pipcam tune --revert`` goes back to the
shipped model.
Tuning the whole model needs torch (the ``train`` extra) and about 20 minutes on a two-core PC.
Without torch (a Pi), or with ``--head``, only the model's last layer is tuned
(``vision.tuning``): seconds, with what the table has already, and worth about half as much on
dice the model never saw (models/MODEL_CARD.md). Being cheap, the last layer is measured by
cross-validation over the games (each game read by a layer tuned without it), so every photo
counts toward the decision rather than the held-out fifth; the rule is the same.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from pipcam.config import AUTO_TUNE_EVERY, ConfigError, table_config, whole_number
from pipcam.photos import export_photos, kept_photos_or_say, write_atomically
from pipcam.run import (
    MODEL_NAME,
    file_stamp,
    find_model,
    load_chosen_model,
    names_a_model,
    table_model,
)
from pipcam.store import Store, StoreError
from pipcam.teach import DISPUTES, Teacher, disputes_of
from vision.errors import ModelLoadError, TuneError
from vision.evaluate import MIN_GAIN
from vision.tuning import FOLDS, HeadConfig, TuneResult, tune_heads

MIN_HELD_OUT = 10
"""Held-out photos below which a difference is not trusted enough to install (``--force`` does)."""

KEEP_RUNS = 3
"""Tuning runs kept in ``DATA/tune`` (about 15 MB each); older ones are deleted after a run."""

NEXT_ROLL = "a running table reads with {} from its next roll (pipcam run watches the file)"


def _tuner() -> Any:
    """``vision.train.tune``, which needs torch; None when the ``train`` extra is not installed."""
    try:
        return importlib.import_module("vision.train.tune")
    except ImportError:
        return None


def new_run_folder(work: Path) -> Path:
    """A folder for this run, named by its start time (a suffix if one of that name exists)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out, n = work / stamp, 1
    while out.exists():
        n += 1
        out = work / f"{stamp}-{n}"
    return out


def prune_runs(work: Path, keep: int = KEEP_RUNS) -> list[Path]:
    """Delete all but the newest ``keep`` run folders (the export stays); returns those deleted.
    The installed model is a copy beside the games, so no run is needed to read with it."""
    runs = sorted(
        (p for p in work.iterdir() if p.is_dir() and p.name != "photos"),
        key=lambda p: p.stat().st_mtime_ns,
    )
    old = runs[: max(0, len(runs) - keep)]
    for run in old:
        shutil.rmtree(run, ignore_errors=True)
    return old


def install_model(tuned: Path, data: Path) -> Path:
    """Put ``tuned`` where the table reads it, atomically; an earlier tuned model is kept as
    ``dice_faces.previous.onnx``. Returns the installed path."""
    target = table_model(data)
    partial = target.with_name(target.name + ".partial")
    shutil.copyfile(tuned, partial)
    with partial.open("rb") as handle:
        os.fsync(handle.fileno())  # the model is whole on disk before it replaces anything
    if target.is_file():
        shutil.copyfile(target, target.with_name("dice_faces.previous.onnx"))
    os.replace(partial, target)
    return target


def revert_model(data: Path) -> Path | None:
    """Stop reading with the tuned model (it is kept as ``dice_faces.reverted.onnx``)."""
    target = table_model(data)
    if not target.is_file():
        return None
    kept = target.with_name("dice_faces.reverted.onnx")
    os.replace(target, kept)
    return kept


def _launch(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``command`` at the lowest CPU priority, its output in ``log``."""
    nice = shutil.which("nice")
    prefix = [nice, "-n", "19"] if nice else []  # the camera loop and the phones come first
    with log.open("wb") as out:
        return subprocess.Popen(
            prefix + command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )


class AutoTune:
    """A table that keeps photos tunes its face model's last layer by itself.

    After every ``every`` photos kept, ``pipcam tune --head`` runs in the background (a process
    of its own, at the lowest CPU priority): it installs the tuned model only if it reads the
    table's held-out games better, and the running table reads with what it installs from the next
    roll (``pipcam.run.TableModel``). One run at a time; the photos counted toward the next run
    survive a restart (``DATA/tune/auto.json``); each run's output is ``DATA/tune/auto.log``.
    """

    def __init__(
        self,
        data: Path,
        config_file: Path | None = None,
        *,
        every: int = AUTO_TUNE_EVERY,
        launch: Callable[[list[str], Path], Any] = _launch,
    ) -> None:
        """Set up; nothing runs until :meth:`kept` has counted ``every`` photos."""
        if every < 1:
            raise ValueError(f"every must be at least 1, not {every}")
        self.data = data
        self.every = every
        self.work = data / "tune"
        self._state = self.work / "auto.json"
        self.log = self.work / "auto.log"
        self._command = [sys.executable, "-m", "pipcam", "tune", "--head", "--data", str(data)]
        if config_file is not None:
            self._command += ["--config", str(config_file)]
        self._launch = launch
        self._process: Any = None
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self.outcome: str | None = None
        """What the last run finished with, once it has (also printed)."""
        try:
            self.count = int(json.loads(self._state.read_text(encoding="utf-8"))["photos"])
        except (OSError, ValueError, KeyError, TypeError):
            self.count = 0  # no run counted yet (or a damaged count: start again)

    def kept(self, *_: object) -> None:
        """One more photo kept; a run starts when ``every`` have been since the last one."""
        with self._lock:
            self.count += 1
            start = self.count >= self.every and self._process is None
            if start:
                self.count = 0
                self._process = _STARTING  # no second run while this one starts
            self._save()
        if start:
            # Outside the lock: starting and printing may wait (a slow journal), stopping not.
            self._start()

    def _save(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        write_atomically(self._state, json.dumps({"photos": self.count}).encode())

    def _start(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        model = table_model(self.data)
        before = file_stamp(model)
        try:
            if self._closed.is_set():
                raise OSError("the table is stopping")
            process = self._launch(self._command, self.log)
        except OSError as exc:
            with self._lock:
                self._process = None
            self._finish(f"automatic tuning could not start: {exc}")
            return
        with self._lock:
            self._process = process
        print(f"pipcam: tuning the face model's last layer on the kept photos ({self.log})")

        def wait() -> None:
            status = process.wait()
            if self._closed.is_set():
                # Stopped with the table: nothing was installed, and nothing to say.
                with self._lock:
                    self._process = None
                return
            if status != 0:
                said = _last_line(self.log)
                self._finish(f"automatic tuning failed (exit {status}): {said}; see {self.log}")
            elif file_stamp(model) != before:
                self._finish(
                    f"automatic tuning installed {model}, which reads the table's held-out games"
                    " better; the table reads with it from the next roll"
                )
            else:
                self._finish(f"automatic tuning kept the model in use: {_last_line(self.log)}")
            with self._lock:
                self._process = None

        threading.Thread(target=wait, name="auto-tune", daemon=True).start()

    def _finish(self, outcome: str) -> None:
        self.outcome = outcome
        print(f"pipcam: {outcome}", flush=True)

    def running(self) -> bool:
        """Whether a run is under way."""
        with self._lock:
            return self._process is not None

    def close(self) -> None:
        """Stop a run under way (what it has not installed is simply not installed)."""
        self._closed.set()
        with self._lock:
            process = self._process
        if process is not None and process is not _STARTING:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)


_STARTING = object()
"""``AutoTune._process`` while a run is being started."""


def _last_line(log: Path) -> str:
    """The last line a run printed (why it installed nothing, or its error)."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1].removeprefix("pipcam tune: ") if lines else "no output"


def cmd_tune(args: argparse.Namespace) -> int:
    """``pipcam tune``: export, tune, measure and (when better) install."""
    try:
        config, data = table_config(args.config, args.data)
    except ConfigError as exc:
        print(f"pipcam tune: {exc}", file=sys.stderr)
        return 2
    if args.revert:
        kept = revert_model(data)
        if kept is None:
            print(
                f"pipcam tune: no tuned model in {data}; the table reads with the shipped one",
                file=sys.stderr,
            )
            return 1
        print(
            f"pipcam tune: the tuned model is set aside as {kept};"
            f" {NEXT_ROLL.format('the shipped model')}"
        )
        return 0
    photos = kept_photos_or_say(data, "tune", "play, correct what it misreads, then tune")
    if photos is None:
        return 1
    whole = None if args.head else _tuner()
    if whole is None and (args.epochs is not None or args.renders is not None):
        why = "--head tunes" if args.head else "without torch (the `train` extra) it can tune"
        print(
            f"pipcam tune: --epochs and --renders are for tuning the whole model; {why} only the"
            " last layer: leave them out, or install torch with .venv/bin/pip install -e"
            f" '.[train]' (or copy {data} to a PC and run pipcam tune --data there)",
            file=sys.stderr,
        )
        return 2
    if whole is None and not args.head:
        print(
            "pipcam tune: torch (the `train` extra) is not installed: tuning the last layer"
            " only, which takes seconds; the whole model tunes further with .venv/bin/pip"
            f" install -e '.[train]', or on a PC (copy {data} and run pipcam tune --data there)",
            flush=True,
        )
    work = data / "tune"
    # The export is this command's own: made anew, so photos the table no longer keeps go too.
    shutil.rmtree(work / "photos", ignore_errors=True)
    try:
        with Store(data / "pipcam.db") as store:
            summary = export_photos(store, photos, work / "photos", link=True)
            unanswered, _ = Teacher(store, photos).questions(limit=0)
    except (StoreError, FileExistsError) as exc:
        print(f"pipcam tune: {exc}", file=sys.stderr)
        return 2
    print(f"pipcam tune: {work / 'photos'}: {summary.line()}", flush=True)
    if unanswered:
        print(
            f"pipcam tune: {unanswered} dice read unsurely teach nothing until the players answer"
            ' them on the phones\' teach sheet ("Check the dice the camera was unsure of")',
            flush=True,
        )
    try:
        # A damaged tuned model is reported, and the run starts from and is compared with the
        # shipped one, which pipcam run reads with; an installed result replaces the damaged file.
        current, why, _ = load_chosen_model(config, data)
    except ModelLoadError as exc:
        print(f"pipcam tune: {exc}", file=sys.stderr)
        return 1
    # The whole model is tuned from the shipped one; the last layer from the model in use, so
    # that a model tuned whole on a PC is refined, not replaced by a lesser one.
    # Whole: torch rebuilds the members from float weights, so it starts from the float model.
    model = args.model or (current if whole is None else find_model(MODEL_NAME))
    if whole is not None and not args.force and not args.no_install:
        # Tuning the whole model takes minutes: say before it, not after, that its result could
        # not be trusted (the last layer is measured over every photo, so it is checked after).
        try:
            held_out = whole.held_out_photos([work / "photos"])
        except TuneError as exc:
            print(f"pipcam tune: {exc}", file=sys.stderr)
            return 1
        if held_out < MIN_HELD_OUT:
            print(
                f"pipcam tune: not tuned: {held_out} held-out photos are too few to trust (at"
                f" least {MIN_HELD_OUT}; the photos of a fifth of the games are held out); keep"
                " playing with --keep-photos and tune again, tune the last layer with --head"
                " (measured over every photo), or tune and install anyway with --force"
            )
            return 0
    out = new_run_folder(work)
    try:
        if whole is None:
            threads = 1 if args.threads is None else args.threads
            # Cross-validated: every photo measures the layer, not the held-out fifth.
            settings = HeadConfig(threads=threads, folds=FOLDS)
            result = tune_heads([work / "photos"], out, settings, model=model, baseline=current)
        else:
            asked = {k: getattr(args, k) for k in ("epochs", "renders", "threads")}
            defaults = whole.TuneConfig()
            settings = replace(defaults, **{k: v for k, v in asked.items() if v is not None})
            result = whole.tune_model(
                [work / "photos"], out, settings, model=model, baseline=current
            )
    except (TuneError, ModelLoadError, OSError) as exc:
        print(f"pipcam tune: {exc}", file=sys.stderr)
        return 1
    old = prune_runs(work)
    if old:
        print(f"pipcam tune: deleted {len(old)} older tuning runs in {work} (the newest stay)")
    comparison = result.comparison
    print("\n".join(comparison.lines()))
    _dispute(work, result)
    # The folds' layers served the comparison and the disputes; on an SD card 5 more models a
    # run (25 MB) are not worth keeping.
    shutil.rmtree(result.tuned.parent / "folds", ignore_errors=True)
    print(f"pipcam tune: compared with the model the table reads with now: {current} ({why})")
    held_out = comparison.photos
    if not args.force:
        if held_out < MIN_HELD_OUT:
            why = (
                "each game read by a layer tuned on the others"
                if comparison.by_folds
                else "the photos of a fifth of the games are held out"
            )
            print(
                f"pipcam tune: not installed: {held_out} {comparison.measured} are too few to"
                f" trust (at least {MIN_HELD_OUT}; {why}); keep playing with --keep-photos and"
                " tune again, or install it anyway with --force"
            )
            return 0
        if not comparison.better:
            print(
                f"pipcam tune: not installed: it reads the {comparison.measured} no better (it must"
                f" cost the players at least {MIN_GAIN} less); the table keeps {current}"
                f" ({result.tuned} stays for pipcam eval --model)"
            )
            return 0
    if args.no_install:
        print(f"pipcam tune: {result.tuned} would be installed; left out (--no-install)")
        return 0
    installed = install_model(result.tuned, data)
    print(
        f"pipcam tune: installed as {installed}; {NEXT_ROLL.format('it')};"
        " pipcam tune --revert undoes it"
    )
    if names_a_model(config):
        print(
            "pipcam tune: note: the configuration's `model` or PIPCAM_MODEL names another"
            " model, which the table reads with first; remove it to read with this one"
        )
    return 0


def _dispute(work: Path, result: TuneResult) -> None:
    """Keep the held-out dice that the tuned model reads otherwise than the table's sure read, for
    the phones' teach sheet (pipcam.teach), and say how many."""
    try:
        disputes = disputes_of(work / "photos", result)
    except (ModelLoadError, OSError, ValueError) as exc:
        print(
            f"pipcam tune: the held-out dice were not compared one by one: {exc}", file=sys.stderr
        )
        return
    write_atomically(work / DISPUTES, json.dumps(disputes).encode())
    if disputes:
        print(
            f"pipcam tune: the tuned model reads {len(disputes)} held-out dice otherwise than the"
            " table did surely; they come first on the phones' teach sheet, and the next run"
            " decides on the answers",
            flush=True,
        )


def add_tune_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``pipcam tune [--data DIR] [--config FILE] [--revert] ...``."""
    p = subparsers.add_parser(
        "tune",
        help="tune the face model on this table's kept photos; read with it if it reads better",
    )
    p.add_argument("--data", help="where the table keeps its games (as pipcam run --data)")
    p.add_argument("--config", help="the table's TOML configuration file")
    p.add_argument(
        "--revert", action="store_true", help="go back to the shipped model (the tuned is kept)"
    )
    p.add_argument(
        "--model",
        type=Path,
        help="face model to tune (the whole model: the shipped one; --head: the one in use)",
    )
    p.add_argument(
        "--head",
        action="store_true",
        help="tune only the last layer: seconds, no torch (what it does without torch anyway)",
    )
    # The defaults are vision.train.tune's (TuneConfig), which needs torch to import.
    p.add_argument("--epochs", type=whole_number(1), help="passes over the crops (3)")
    p.add_argument(
        "--renders",
        type=whole_number(0),
        help="fresh synthetic crops beside the table's, so other dice are not forgotten (6000)",
    )
    p.add_argument(
        "--threads",
        type=whole_number(1),
        help="CPU threads (2 for the whole model, 1 for the last layer)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="install the tuned model even if the photos measured do not show it reads better",
    )
    p.add_argument(
        "--no-install", action="store_true", help="tune and measure only; change nothing"
    )
    p.set_defaults(func=cmd_tune)
