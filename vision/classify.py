"""Every onnxruntime session: the face model and the learned locator. Nothing else imports it.

The face model turns crops into class probabilities; the locator turns a scaled frame into a
heatmap of die centres and box sizes (decoded by :mod:`vision.detect`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import os
import platform
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from vision import onnx_wire as wire
from vision.errors import ModelLoadError

if TYPE_CHECKING:
    import onnx

__all__ = [
    "CLASSES",
    "DEFAULT_LOCATOR_MODEL",
    "DEFAULT_MODEL",
    "FLOAT_LOCATOR_MODEL",
    "FLOAT_MODEL",
    "FIRST_SURE",
    "SURE_FACE",
    "UNSURE_NO_FACE",
    "Classifier",
    "FakeClassifier",
    "OnnxClassifier",
    "OnnxLocator",
    "last_linear",
    "member_models",
    "members_of",
    "onnxruntime_version",
    "processor",
    "session_options",
    "read_unsure_turned",
    "softmax",
    "with_outputs",
]

CLASSES = 7
"""Class 0 is "not a readable face"; classes 1..6 are the face values."""

MODELS = Path(__file__).resolve().parent.parent / "models"
"""Where the shipped models live in the source tree."""

DEFAULT_MODEL = MODELS / "dice_faces.int8.onnx"
"""The face model the reader runs: the int8 copy of :data:`FLOAT_MODEL`
(``python -m vision.train.quantize``), a third of its time for the same readings."""

FLOAT_MODEL = MODELS / "dice_faces.onnx"
"""The face model as training made it: what tuning and retraining start from."""

DEFAULT_LOCATOR_MODEL = MODELS / "dice_locator.int8.onnx"
"""The learned locator the reader runs: the int8 copy of :data:`FLOAT_LOCATOR_MODEL`."""

FLOAT_LOCATOR_MODEL = MODELS / "dice_locator.onnx"
"""The learned locator as training made it."""

SURE_FACE = 0.5
"""A face read with at least this probability is ``ok`` (``DiceReader``'s ``min_confidence``): where
a wrong value, weighed three times a question to the players, and an unread die cost least on the
training photos (vision/reader.py)."""

UNSURE_NO_FACE = 0.2
"""An unsure face to which "no face" has at least this probability is dropped as a likely phantom
(``DiceReader``'s ``unsure_no_face``; vision/reader.py)."""

FIRST_SURE = 0.95
"""A composed face model's first member decides alone the crops it reads with at least this
probability; the other members read only the rest (``OnnxClassifier``). On the held-out crops of
every source, the unseen nell-byler dice (members trained without them) and the unseen logo sixes,
no die's reading changed from 0.93 up (at 0.9 two of 1491 unseen dice turned wrong); 0.95 keeps
a margin and spares the second member about half the crops of real photos (models/MODEL_CARD.md,
"Reading whole photos", the decision rules)."""

X86_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
"""The x86 features that choose onnxruntime's integer kernels."""

ARM_HWCAPS = {1 << 1: "asimd", 1 << 10: "asimdhp", 1 << 20: "asimddp"}
"""The aarch64 ``AT_HWCAP`` bits that choose them (Linux's ``hwcap.h``): NEON, half-precision
and 8-bit dot products (a Pi 5's Cortex-A76 has the last two, a Pi 4's Cortex-A72 neither)."""

AT_HWCAP = 16

Crops = npt.NDArray[np.float32]
Probabilities = npt.NDArray[np.float32]
Features = npt.NDArray[np.float32]


class Classifier(Protocol):
    """Anything that turns (N, 3, 64, 64) RGB crops into (N, 7) class probabilities."""

    def predict(self, crops: Crops) -> Probabilities:
        """Return softmax probabilities, one row per crop."""
        ...


def softmax(logits: npt.NDArray[np.floating[Any]]) -> Probabilities:
    """Return the row-wise softmax of ``logits`` as float32.

    >>> softmax(np.array([[0.0, 0.0]])).tolist()
    [[0.5, 0.5]]
    """
    # In float64, then rounded to float32: numpy's float32 exp rounds its last bit otherwise on
    # x86 and ARM, which would move a probability held against a threshold.
    wide = np.asarray(logits, np.float64)
    exp = np.exp(wide - np.max(wide, axis=1, keepdims=True))
    return np.asarray(exp / np.sum(exp, axis=1, keepdims=True), dtype=np.float32)


def read_unsure_turned(
    classifier: Classifier, crops: Crops, probs: Probabilities, below: float
) -> Probabilities:
    """Read again, turned by 90, 180 and 270 degrees, every crop whose top probability is below
    ``below``, and average the four readings (mean log-probability, renormalised).

    A die's value does not depend on how it lies, so what a model saw in one orientation by
    chance (a glare spot, a swirl) weighs less once the four are averaged. Sure crops, nearly all
    of them on a clear tray, are read once: the cost is paid only where it can help.

    >>> fake = FakeClassifier(lambda crop: (2, 0.45) if crop[0, 0, 0] else (3, 0.9))
    >>> crops = np.zeros((2, 3, 4, 4), np.float32)
    >>> crops[0, 0, 0, 0] = 1.0  # a spot in one corner: unsure as it lies, a three once turned
    >>> probs = fake.predict(crops)
    >>> turned = read_unsure_turned(fake, crops, probs, 0.8)
    >>> [int(row.argmax()) for row in turned], bool((turned[1] == probs[1]).all())
    ([3, 3], True)
    >>> len(fake.calls[-1])  # three turns of the one unsure crop, in one batch
    3
    """
    unsure = np.flatnonzero(probs.max(axis=1) < below)
    if len(unsure) == 0:
        return probs
    chosen = crops[unsure]
    turns = np.ascontiguousarray(
        np.concatenate([np.rot90(chosen, k, axes=(2, 3)) for k in (1, 2, 3)])
    )
    # Every member reads the turns: a face the model is unsure of as it lies is no place for the
    # first member alone to decide (one that read a speck as a sure six at a turn invented a die).
    reread = (
        classifier.predict_whole if isinstance(classifier, OnnxClassifier) else classifier.predict
    )
    views = np.concatenate([probs[unsure], reread(turns)])
    logs = np.log(np.clip(views.astype(np.float64), 1e-12, None)).reshape(4, len(unsure), -1)
    logs = logs.mean(axis=0)
    out = probs.copy()
    out[unsure] = softmax(logs)
    return out


def onnxruntime_version() -> str:
    """Return the installed onnxruntime version."""
    import onnxruntime

    return str(onnxruntime.__version__)


def processor() -> str:
    """This machine's processor as far as its integer kernels go: ``x86_64 (avx2 avx_vnni)``,
    ``aarch64 (asimd)`` (the features of ``X86_FLAGS`` or ``ARM_HWCAPS`` it has, read on Linux);
    and ``QEMU_CPU`` when qemu emulates it: ``x86_64, qemu Haswell`` (qemu hands an x86 program
    the host's /proc/cpuinfo, so its flags would be the host's, not the emulated model's)."""
    machine = platform.machine()
    features: list[str] = []
    emulated = os.environ.get("QEMU_CPU")
    if machine in ("x86_64", "AMD64") and not emulated:
        try:
            text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
        except OSError:
            text = ""
        flags = next(
            (
                line.split(":", 1)[1].split()
                for line in text.splitlines()
                if line.startswith("flags")
            ),
            [],
        )
        features = [flag for flag in X86_FLAGS if flag in flags]
    elif machine == "aarch64" and (libc := ctypes.util.find_library("c")):
        getauxval = ctypes.CDLL(libc).getauxval
        getauxval.restype = ctypes.c_ulong
        hwcap = int(getauxval(ctypes.c_ulong(AT_HWCAP)))
        features = [name for bit, name in ARM_HWCAPS.items() if hwcap & bit]
    text = f"{machine} ({' '.join(features)})" if features else machine
    if emulated:
        text += f", qemu {emulated}"
    return text


def session_options(threads: int) -> Any:
    """onnxruntime options for a CPU session on exactly ``threads`` threads, run in order."""
    import onnxruntime

    if threads < 1:
        raise ValueError(f"threads must be at least 1, got {threads}")
    options = onnxruntime.SessionOptions()
    # Set both explicitly: by default onnxruntime spreads over every core, which on a Pi also
    # runs the camera and the web server, and makes timings depend on the machine.
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def members_of(model: wire.Model) -> list[wire.Model]:
    """The members of a face model composed by ``vision.train.ensemble`` (without turns), each a
    model of its own: "image" in, its log-softmax out. Any other model gives ``[]``.

    The composition prefixes every name of member ``i`` with ``m{i}/`` and averages the members'
    ``LogSoftmax`` outputs with a ``Sum`` into ``compose/sum``, scaled into "logits".
    """
    graph = model.graph
    producers = {out: node for node in graph.nodes for out in node.outputs}
    total, last = producers.get("compose/sum"), producers.get("logits")
    if total is None or last is None or total.op_type != "Sum" or last.op_type != "Mul":
        return []
    if "compose/sum" not in last.inputs:
        return []  # the turned composition averages over turns after the scale
    logps = total.inputs
    if len(logps) < 2 or any(
        name not in producers or producers[name].op_type != "LogSoftmax" for name in logps
    ):
        return []
    members = []
    for logp in logps:
        prefix = logp.rsplit("/", 1)[0] + "/"
        sub = wire.Graph(
            name=f"{graph.name}/{prefix}",
            nodes=tuple(
                n for n in graph.nodes if n.outputs and all(o.startswith(prefix) for o in n.outputs)
            ),
            initializers=tuple(i for i in graph.initializers if i.name.startswith(prefix)),
            inputs=graph.inputs[:1],
            outputs=(wire.tensor_info(logp, ["batch", CLASSES]),),
        )
        members.append(wire.Model(model.ir_version, model.opset_imports, sub))
    return members


def member_models(model: onnx.ModelProto) -> list[onnx.ModelProto]:
    """:func:`members_of` for a model the onnx package holds (what training works on)."""
    import onnx

    parts = members_of(wire.parse_model(model.SerializeToString()))
    return [onnx.load_from_string(part.serialize()) for part in parts]


def last_linear(graph: wire.Graph) -> int | None:
    """Where in ``graph`` its last linear layer (``Gemm``) is, None without one. The tensor that
    layer reads holds the model's pooled features, which the die check reads."""
    gemms = [i for i, node in enumerate(graph.nodes) if node.op_type == "Gemm"]
    return gemms[-1] if gemms else None


def with_outputs(model: wire.Model, *names: str, replace: bool = False) -> wire.Model:
    """``model`` with float tensors ``names`` as outputs (shapes unknown): after its own, or
    instead of them with ``replace``."""
    graph = model.graph
    outputs = (() if replace else graph.outputs) + tuple(wire.tensor_info(n) for n in names)
    return dataclasses.replace(model, graph=dataclasses.replace(graph, outputs=outputs))


def _session(path: Path, threads: int, *, what: str, missing: str, damaged: str) -> Any:
    """Open an onnxruntime CPU session on ``threads`` threads; errors name the file."""
    import onnxruntime

    if not path.is_file():
        raise ModelLoadError(f"{what} {str(path)!r} not found: {missing}")
    options = session_options(threads)
    try:
        return onnxruntime.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as err:  # onnxruntime raises its own untyped errors for bad files
        raise ModelLoadError(
            f"cannot load {what} {str(path)!r}: {err}; the file is damaged or not an"
            f" ONNX model: {damaged}"
        ) from err


class OnnxClassifier:
    """The ONNX face model run by onnxruntime on the CPU with a fixed number of threads."""

    def __init__(
        self,
        model_path: str | os.PathLike[str] = DEFAULT_MODEL,
        *,
        threads: int = 1,
        first_sure: float | None = FIRST_SURE,
    ):
        """Load the model; raise :class:`ModelLoadError` naming the file and what to do.

        ``first_sure``: a composed model's first member alone decides the crops it reads with at
        least this probability (:data:`FIRST_SURE`); ``None`` always reads every member.
        """
        if first_sure is not None and not 0.0 < first_sure <= 1.0:
            raise ValueError(
                f"first_sure must be a probability above 0 and at most 1, or None, got {first_sure}"
            )
        self.path = Path(model_path)
        self.threads = threads
        self.first_sure = first_sure
        self._lock = threading.Lock()
        self._session: Any = None
        self._batch: int | None = None
        # features_tensor: the first member's pooled features that predict_with_features gives
        # (the tensor its last linear layer reads), None for a model read whole.
        self._members: list[tuple[Any, str]] = []
        self.features_tensor: str | None = None
        if first_sure is not None:
            self._members, self.features_tensor = self._member_sessions()
        if not self._members:
            self._opened()

    def _opened(self) -> Any:
        """The session on the whole model: opened at once for a model read whole, and for a
        composed one read member by member only when :meth:`logits` is asked (its members give
        every reading; the whole would hold their weights a second time: 3 MB more resident
        for the shipped int8 pair)."""
        with self._lock:
            if self._session is None:
                self._session = self._whole_session()
            return self._session

    def _whole_session(self) -> Any:
        """Open the whole model, checking its input, output and batch."""
        session = _session(
            self.path,
            self.threads,
            what="face model",
            missing="pass --model PATH, or restore models/dice_faces.onnx from the repository",
            damaged="restore models/dice_faces.onnx or retrain it (vision/train)",
        )
        inputs = {i.name: i for i in session.get_inputs()}
        outputs = {o.name: o for o in session.get_outputs()}
        if "image" not in inputs or "logits" not in outputs:
            raise ModelLoadError(
                f"face model {str(self.path)!r} has inputs {sorted(inputs)} and outputs"
                f" {sorted(outputs)}; expected input 'image' and output 'logits'"
            )
        batch = inputs["image"].shape[0]
        # A model exported with a fixed batch of 1 is run one crop at a time.
        self._batch = batch if isinstance(batch, int) and batch > 0 else None
        return session

    def __repr__(self) -> str:
        return f"OnnxClassifier({str(self.path)!r})"

    def logits(self, crops: Crops) -> npt.NDArray[np.float32]:
        """Return the model's raw (N, 7) logits for ``crops``."""
        crops = np.ascontiguousarray(crops, dtype=np.float32)
        if len(crops) == 0:
            return np.zeros((0, CLASSES), np.float32)
        session = self._opened()
        if self._batch is None:
            (out,) = session.run(["logits"], {"image": crops})
            result = np.asarray(out, dtype=np.float32)
        else:
            parts = [
                session.run(["logits"], {"image": crops[i : i + self._batch]})[0]
                for i in range(0, len(crops), self._batch)
            ]
            result = np.concatenate(parts).astype(np.float32)
        if result.ndim != 2 or result.shape[1] != CLASSES:
            raise ModelLoadError(
                f"face model {str(self.path)!r} returned logits of shape {result.shape};"
                f" expected (N, {CLASSES})"
            )
        return result

    def _member_sessions(self) -> tuple[list[tuple[Any, str]], str | None]:
        """Sessions of a composed model's members with their output names, [] for one model;
        and the first member's pooled features, which its session gives too (None without):
        the die check reads them, and from the run that reads the crops they come for free.
        """
        import onnxruntime

        try:
            whole = wire.parse_model(self.path.read_bytes())
        except (OSError, wire.WireError):
            return [], None  # opening the whole model says what is wrong with the file
        members = members_of(whole)
        features = None
        if members and (last := last_linear(members[0].graph)) is not None:
            features = members[0].graph.nodes[last].inputs[0]
            members[0] = with_outputs(members[0], features)
        try:
            sessions = [
                (
                    onnxruntime.InferenceSession(
                        member.serialize(),
                        sess_options=session_options(self.threads),
                        providers=["CPUExecutionProvider"],
                    ),
                    member.graph.output_names[0],
                )
                for member in members
            ]
        except Exception:  # noqa: BLE001 - onnxruntime's own errors: the whole model says them
            return [], None
        # Members with a fixed batch would refuse a frame's crops at once: read such a model whole.
        if any(
            isinstance(batch := session.get_inputs()[0].shape[0], int) and batch > 0
            for session, _ in sessions
        ):
            return [], None
        return sessions, features

    @property
    def has_members(self) -> bool:
        """Whether the model is a composition read member by member (``first_sure`` set)."""
        return bool(self._members)

    def first_member_logp(self, crops: Crops) -> npt.NDArray[np.float32]:
        """The first member's own (N, 7) log-probabilities, what decides the sure crops alone;
        ``ValueError`` for a model read whole (:attr:`has_members` false)."""
        if not self._members:
            raise ValueError(f"{self!r} is read whole: it has no first member to read alone")
        return _member_logp(self._members[0], np.ascontiguousarray(crops, dtype=np.float32))

    def predict_whole(self, crops: Crops) -> Probabilities:
        """Return (N, 7) softmax probabilities for ``crops`` read by the whole model: by every
        member, for a composed one (what its graph computes: the mean of their log-softmax)."""
        if not self._members or len(crops) == 0:
            return softmax(self.logits(crops))
        crops = np.ascontiguousarray(crops, dtype=np.float32)
        total = sum(_member_logp(member, crops) for member in self._members)
        return softmax(np.asarray(total, np.float32) / len(self._members))

    def predict(self, crops: Crops) -> Probabilities:
        """Return (N, 7) softmax probabilities for ``crops``.

        A composed model is read member by member, and its first member's reading stands for a
        crop it is sure of (``first_sure``); the later members, several times its cost, read only
        the others, which get the composed reading (models/MODEL_CARD.md, the decision rules).
        """
        return self.predict_with_features(crops)[0]

    def predict_with_features(self, crops: Crops) -> tuple[Probabilities, Features | None]:
        """:meth:`predict`, and the (N, D) features :attr:`features_tensor` of each crop from
        the same run of the first member; None for a model read whole."""
        members = self._members
        if not members or self.first_sure is None or len(crops) == 0:
            return self.predict_whole(crops), None
        crops = np.ascontiguousarray(crops, dtype=np.float32)
        first, *rest = members
        first_logp, features = _member_run(first, crops, self.features_tensor)
        probs = softmax(first_logp)
        unsure = np.flatnonzero(probs.max(axis=1) < self.first_sure)
        if len(unsure):
            chosen = crops[unsure]
            total = first_logp[unsure] + sum(_member_logp(member, chosen) for member in rest)
            probs[unsure] = softmax(total / len(members))
        return probs, features


def _member_logp(member: tuple[Any, str], crops: Crops) -> npt.NDArray[np.float32]:
    """One member's (N, 7) log-probabilities: its session run on ``crops``."""
    session, name = member
    return np.asarray(session.run([name], {"image": crops})[0], dtype=np.float32)


def _member_run(
    member: tuple[Any, str], crops: Crops, features: str | None
) -> tuple[npt.NDArray[np.float32], Features | None]:
    """One member's (N, 7) log-probabilities and, if named, its (N, D) ``features``."""
    if features is None:
        return _member_logp(member, crops), None
    session, name = member
    logp, pooled = session.run([name, features], {"image": crops})
    return (
        np.asarray(logp, dtype=np.float32),
        np.asarray(pooled, dtype=np.float32).reshape(len(crops), -1),
    )


class OnnxLocator:
    """The learned locator's ONNX session: a scaled frame in, centre heatmap and boxes out."""

    def __init__(
        self, model_path: str | os.PathLike[str] = DEFAULT_LOCATOR_MODEL, *, threads: int = 1
    ):
        """Load the model; raise :class:`ModelLoadError` naming the file and what to do."""
        self.path = Path(model_path)
        self._session = _session(
            self.path,
            threads,
            what="locator model",
            missing="pass --locator-model PATH or --locator classical, or restore"
            " models/dice_locator.onnx from the repository",
            damaged="restore models/dice_locator.onnx or retrain it"
            " (python -m vision.train.locator)",
        )
        inputs = {i.name for i in self._session.get_inputs()}
        outputs = {o.name for o in self._session.get_outputs()}
        if inputs != {"image"} or not {"heatmap", "boxes"} <= outputs:
            raise ModelLoadError(
                f"locator model {str(self.path)!r} has inputs {sorted(inputs)} and outputs"
                f" {sorted(outputs)}; expected input 'image' and outputs 'heatmap' and 'boxes'"
            )

    def __repr__(self) -> str:
        return f"OnnxLocator({str(self.path)!r})"

    def run(
        self, image: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """Return heatmap logits (1, 1, h, w) and boxes (1, 4, h, w) for a (1, 3, H, W) input."""
        heat, boxes = self._session.run(
            ["heatmap", "boxes"], {"image": np.ascontiguousarray(image, dtype=np.float32)}
        )
        heat = np.asarray(heat, dtype=np.float32)
        boxes = np.asarray(boxes, dtype=np.float32)
        if heat.ndim != 4 or boxes.ndim != 4 or heat.shape[1] != 1 or boxes.shape[1] != 4:
            raise ModelLoadError(
                f"locator model {str(self.path)!r} returned heatmap {heat.shape} and boxes"
                f" {boxes.shape}; expected (1, 1, h, w) and (1, 4, h, w)"
            )
        return heat, boxes


class FakeClassifier:
    """A stand-in for tests: ``decide(crop) -> (class, confidence)`` answers each crop."""

    def __init__(self, decide: Callable[[npt.NDArray[np.float32]], tuple[int, float]]) -> None:
        """Keep the function that answers each crop; every batch seen is kept in ``calls``."""
        self.decide = decide
        self.calls: list[Crops] = []

    def predict(self, crops: Crops) -> Probabilities:
        """Return probabilities with ``confidence`` on the decided class, the rest shared out."""
        self.calls.append(crops)
        probs = np.zeros((len(crops), CLASSES), np.float32)
        for row, crop in enumerate(crops):
            label, confidence = self.decide(crop)
            probs[row, :] = (1.0 - confidence) / (CLASSES - 1)
            probs[row, label] = confidence
        return probs
