"""The README's console examples are what the commands print today.

The issue asks the README to show `pipcam read` and `pipcam bench` "with their real output";
a model retrained or a message reworded must not leave it showing yesterday's. Every example
with output is run here in-process (the real models, a scratch folder as the working folder),
unless ``NOT_RUN`` says why it cannot be; ``...`` in an example stands for output left out.
"""

from __future__ import annotations

import glob
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import cv2
import pytest

from pipcam.cli import main
from vision.synthetic import make_frame, six_dice

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

NOT_RUN = {
    "pipcam replay game.jsonl": "the transcript of a game played at the reader's own table",
    "pipcam bench": "its figures are timings, which change from run to run and machine to machine",
}
"""Examples whose output cannot be reproduced here, each with why."""

LENS_BLURS = {
    # The README says how its frames were made: six synthetic dice seen through a lens turned
    # through focus (blurs in px, a frame each), and a lens far off.
    "turning": [12.0, 6.0, 2.0, 0.0, 3.0, 9.0],
    "far": [40.0, 30.0, 20.0, 14.0, 8.0, 2.0],
}


@dataclass(frozen=True)
class Example:
    """One ``$ pipcam ...`` line of a console block and the output shown under it."""

    line: int
    command: str
    output: str

    def __str__(self) -> str:
        return f"README.md line {self.line}: $ {self.command}"


def examples() -> list[Example]:
    """Every command of the README's ``console`` blocks that shows output."""
    found: list[Example] = []
    in_console = False
    command: tuple[int, str] | None = None
    shown: list[str] = []

    def close() -> None:
        if command is not None and shown:
            found.append(Example(command[0], command[1], "\n".join(shown)))

    for number, text in enumerate(README.read_text(encoding="utf-8").splitlines(), start=1):
        if text.startswith("```"):
            if in_console:
                close()
                command, shown = None, []
            in_console = text.strip() == "```console"
        elif in_console and text.startswith("$ "):
            close()
            command, shown = (number, text[2:].strip()), []
        elif in_console and command is not None:
            shown.append(text)
    return found


def _flat(text: str) -> str:
    """``text`` with each run of white space (line breaks too) as one space: the README wraps
    long JSON lines and lines up columns by hand."""
    return " ".join(text.split())


def shows(expected: str, actual: str) -> bool:
    """Whether ``actual`` is what ``expected`` shows, each ``...`` standing for anything."""
    pattern = ".*".join(re.escape(part) for part in _flat(expected).split("..."))
    return re.fullmatch(pattern, _flat(actual), flags=re.DOTALL) is not None


@pytest.mark.parametrize(
    ("expected", "actual", "match"),
    [
        ('{"points": 2000, ...}', '{"points": 2000, "scoring": [3, 3]}', True),
        ('{"points": 2000, ...}', '{"points": 200, "scoring": [3, 3]}', False),
        ("a: 1\n  ...\nz: 26", "a: 1\nb: 2\nz:   26", True),
        ("a: 1\nz: 26", "a: 1\nz: 26\nextra", False),
        ('[{"value": 3,\n "confidence": 0.9}, ...]', '[{"value": 3, "confidence": 0.9}]', False),
        ('[{"value": 3,\n "confidence": 0.9}, ...]', '[{"value": 3, "confidence": 0.9}, {}]', True),
    ],
)
def test_shows_reads_the_examples_as_a_reader_would(
    expected: str, actual: str, match: bool
) -> None:
    assert shows(expected, actual) is match


def test_the_readme_has_the_examples_the_issue_asks_for() -> None:
    """`pipcam read` (text and JSON) and `pipcam bench`, each with output under it."""
    commands = [example.command.split()[:2] for example in examples()]
    assert ["pipcam", "read"] in commands
    assert ["pipcam", "bench"] in commands
    assert any("--json" in example.command for example in examples() if "read" in example.command)


def _argv(command: str) -> list[str]:
    """The arguments a shell would pass: words split, ``#`` comments dropped, globs expanded."""
    words = shlex.split(command, comments=True)
    assert words[0] == "pipcam", command
    argv: list[str] = []
    for word in words[1:]:
        argv.extend(sorted(glob.glob(word)) if any(c in word for c in "*?[") else [word])
    return argv


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working folder the examples assume, made once: the repository's tests/ and the
    lens-focus frames the README describes."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    frame = make_frame(1280, 960, six_dice(1280, 960, seed=3), seed=3)
    for name, blurs in LENS_BLURS.items():
        (folder / name).mkdir()
        for index, blur in enumerate(blurs):
            seen = cv2.GaussianBlur(frame, (0, 0), blur) if blur else frame
            assert cv2.imwrite(str(folder / name / f"{index:02d}.png"), seen)
    return folder


@pytest.mark.parametrize(
    "example",
    [e for e in examples() if _flat(e.command.split("#")[0]) not in NOT_RUN],
    ids=str,
)
def test_the_readme_shows_what_the_command_prints(
    example: Example,
    scene: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(scene)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    main(_argv(example.command))
    out = capsys.readouterr().out
    assert shows(example.output, out), f"{example} now prints:\n{out}"


def test_every_example_not_run_is_still_in_the_readme() -> None:
    """A reason kept for an example that is gone would hide the next one added."""
    commands = {_flat(e.command.split("#")[0]) for e in examples()}
    assert set(NOT_RUN) <= commands


def _masked(text: str) -> str:
    """``text`` with every figure as N and the processor's description as CPU."""
    text = re.sub(r"; [^;]*; one thread;", "; CPU; one thread;", text)
    return re.sub(r"\d+(\.\d+)?", "N", text)


def test_the_readme_shows_the_lines_bench_prints(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pipcam bench`'s timings differ from run to run, so only what they say is compared: the
    same lines, the same words, every frame's six dice read right."""
    (example,) = [e for e in examples() if e.command == "pipcam bench"]
    monkeypatch.chdir(ROOT)
    assert main(["bench", "--repeat", "2"]) == 0
    out = capsys.readouterr().out
    assert _masked(out).splitlines() == _masked(example.output).splitlines(), out
