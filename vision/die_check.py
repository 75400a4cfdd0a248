"""A second opinion on the boxes the face model calls "no face": a die it cannot read, or nothing.

The face model's class 0 holds two different things: what is no die at all (a knob, a shadow,
a pip-like spot the locator took for one) and a die it cannot read (leaning on another die or on
the tray's wall). The reader used to drop both, so a leaning die vanished from the reading
instead of being reported ``cocked``. The die check tells them apart with a logistic regression
on the pooled features of the face model's first member, fitted by ``python -m
vision.train.die_check`` on the locator's class-0 boxes: rendered leaning dice against the
phantoms of the real training photos (models/EXPERIMENTS.md, "Dice the face model cannot read").

A third check, for the boxes the face model *does* read, tells a die partly hidden (a score card,
a cup or a box lid lying over part of it) from a whole one: what shows of a hidden die can look
like another face (a three cut in half is a two), so the reader asks its value rather than
guess. It reads the same features, then the box's shape and size beside the frame's other dice,
and the face model's probabilities (:func:`hidden_rows`). A fourth reads the same rows for the
boxes the reader would drop (:func:`dropped`), and what the crop shows at the box's sides
(:func:`vision.preprocess.edge_features`: the straight edge of a card that cuts a die): a die
more than a third hidden often reads as "no face", as training taught, and the check tells what
shows of it from a phantom, so that the players are told to move what covers it instead of
finding a die missing.

A fifth reads the rows of the faces again and tells a die that leans (on another die or on the
tray's wall) yet shows enough of a face to be read from a die lying flat: its value is not the
throw's, so the reader calls it ``cocked`` (models/EXPERIMENTS.md, "Leaning dice read as a face,
checked").

A check is fitted to one face model's features: it keeps a fingerprint of what computes them
(the first member without its last layer), so it serves that model and any whose last layers
alone were tuned (``pipcam tune``); a reader on any other face model runs without it, dropping
every class-0 box as before.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeGuard

import numpy as np
import numpy.typing as npt

from vision import onnx_wire as wire
from vision.classify import (
    CLASSES,
    MODELS,
    SURE_FACE,
    UNSURE_NO_FACE,
    Features,
    OnnxClassifier,
    last_linear,
    members_of,
    session_options,
    with_outputs,
)
from vision.errors import ModelLoadError
from vision.preprocess import EDGE_FEATURES, edge_features, sharpness

__all__ = [
    "BLURRED_BELOW",
    "DEFAULT_DIE_CHECK",
    "DieCheck",
    "DieChecker",
    "HIDDEN_EXTRAS",
    "Judgement",
    "die_checker_for",
    "dropped",
    "fit_die_check",
    "hidden_rows",
    "load_die_check",
    "model_features",
]

DEFAULT_DIE_CHECK = MODELS / "die_check.json"
"""The check fitted to the shipped face model (``vision.classify.DEFAULT_MODEL``)."""

BLURRED_BELOW = 0.05
"""A box whose crop's :func:`vision.preprocess.sharpness` is below this is judged by the
blurred-die check, the others by the leaning-die one: between the 95th percentile of rendered
dice blurred past reading (0.031) and the 5th of rendered leaning ones (0.086), near their
geometric mean (models/EXPERIMENTS.md, "Dice the face model cannot read")."""

Box = tuple[float, float, float, float] | tuple[int, int, int, int]

HIDDEN_EXTRAS = 3 + CLASSES
"""What :func:`hidden_rows` adds to the model features: three numbers of box geometry and the
face model's probabilities; then, given the crops, the :data:`EDGE_FEATURES` numbers of
:func:`vision.preprocess.edge_features`. A partly-hidden check reads the rows' first
``len(mean)`` numbers: the edges too, or not."""


def dropped(probs: Features) -> npt.NDArray[np.bool_]:
    """The boxes a reader with the default rules drops unless a check keeps them: read "no
    face", or an unsure face (under 0.5) to which "no face" has a probability of 0.2 or more
    (``DiceReader``'s ``min_confidence`` and ``unsure_no_face``). The partly-hidden check for
    dropped boxes (:attr:`DieCheck.hidden_dropped`) is fitted on and asked about these alone.

    >>> dropped(np.array([[0.6, 0.4, 0, 0, 0, 0, 0], [0.3, 0.45, 0.25, 0, 0, 0, 0],
    ...                   [0.1, 0.45, 0.45, 0, 0, 0, 0], [0.0, 0.9, 0.1, 0, 0, 0, 0]])).tolist()
    [True, True, False, False]
    """
    if not len(probs):
        return np.zeros(0, np.bool_)
    unsure = (probs.max(axis=1) < SURE_FACE) & (probs[:, 0] >= UNSURE_NO_FACE)
    return np.asarray((probs.argmax(axis=1) == 0) | unsure, np.bool_)


def hidden_rows(
    features: Features,
    boxes: Sequence[Box],
    probs: Features,
    *,
    reference: Sequence[Box] | None = None,
    crops: npt.NDArray[np.float32] | None = None,
) -> Features:
    """The rows the partly-hidden checks read for boxes of one frame: the model ``features``,
    then each box's short side over its long one, its long and its short side over the median
    long side of ``reference`` (the boxes read as a face; default and when empty: ``boxes``),
    ``probs``, and with the boxes' face-model ``crops``, what their edges look like
    (:func:`vision.preprocess.edge_features`).

    What shows of a die hidden by a straight edge is often narrower than the dice beside it;
    a die alone in the frame is its own median.

    >>> rows = hidden_rows(np.zeros((2, 1), np.float32), [(0, 0, 10, 10), (0, 0, 5, 10)],
    ...                    np.zeros((2, 7), np.float32))
    >>> [round(float(v), 2) for v in rows[1, 1:4]]
    [0.5, 1.0, 0.5]
    """
    if (
        len(boxes) != len(features)
        or len(probs) != len(features)
        or (crops is not None and len(crops) != len(features))
    ):
        raise ValueError(
            f"{len(features)} feature rows, {len(boxes)} boxes and {len(probs)} readings"
            + ("" if crops is None else f" and {len(crops)} crops")
        )
    edges = 0 if crops is None else EDGE_FEATURES
    if not len(boxes):
        return np.zeros((0, features.shape[1] + HIDDEN_EXTRAS + edges), np.float32)
    sides = _sides(boxes)
    long, short = sides.max(axis=1), sides.min(axis=1)
    median = float(np.median(_sides(reference or boxes).max(axis=1)))
    geometry = np.stack([short / long, long / median, short / median], axis=1)
    parts = [features, geometry, probs]
    if crops is not None:
        parts.append(edge_features(crops, boxes))
    return np.hstack(parts).astype(np.float32)


def _sides(boxes: Sequence[Box]) -> npt.NDArray[np.float64]:
    """Each box's (width, height), at least a pixel."""
    return np.array([(b[2] - b[0], b[3] - b[1]) for b in boxes], np.float64).clip(min=1.0)


def _first_member(model_path: Path) -> wire.Model:
    """A composed face model's first member (the CNN), or the model itself if it is one."""
    try:
        model = wire.parse_model(model_path.read_bytes())
    except (OSError, wire.WireError) as err:
        raise ModelLoadError(f"cannot load face model {str(model_path)!r}: {err}") from err
    members = members_of(model)
    return members[0] if members else model


def model_features(model_path: Path) -> tuple[str, str]:
    """The tensor that the last linear layer of ``model_path``'s first member reads (the pooled
    features a check is fitted on), and a sha256 of the layers that compute it: the same for a
    model whose last layers alone were tuned. ``ModelLoadError`` if there is no such layer."""
    return _features_of(_first_member(model_path), model_path)


def _features_of(member: wire.Model, model_path: Path) -> tuple[str, str]:
    """:func:`model_features` of the first member already read from ``model_path``."""
    first = member.graph
    index = last_linear(first)
    if index is None:
        raise ModelLoadError(
            f"face model {str(model_path)!r} has no last linear layer whose features a die check"
            " could read; use a face model written by `python -m vision.train`"
        )
    last = first.nodes[index]
    digest = hashlib.sha256()
    # The bytes protobuf writes for each message: what the checks shipped were fitted against.
    for node in first.nodes[:index]:
        digest.update(node.raw)
    for init in sorted(first.initializers, key=lambda i: i.name):
        if init.name not in last.inputs:
            digest.update(init.raw)
    return last.inputs[0], digest.hexdigest()


@dataclass(frozen=True)
class DieCheck:
    """``P(die) = sigmoid(((features - mean) / scale) @ weight + bias)``; a die from
    ``threshold`` up. With a layer, ``weight`` reads the layer's units instead:
    ``relu(((features - mean) / scale) @ layer_weight + layer_bias)``."""

    features_sha256: str
    """What computes the features it reads (:func:`model_features`)."""
    features: str
    """The tensor of the face model's first member that holds the pooled features."""
    mean: Features
    scale: Features
    weight: Features
    bias: float
    threshold: float
    blurred: DieCheck | None = None
    """The check for boxes blurred past reading (sharpness below :data:`BLURRED_BELOW`), which
    the leaning-die one was never fitted on; None: this one judges every box."""
    hidden: DieCheck | None = None
    """The check for boxes read as a face: P(partly hidden), on :func:`hidden_rows`; None:
    none is asked about."""
    hidden_dropped: DieCheck | None = None
    """The check for the boxes the reader would drop (:func:`dropped`) and the leaning-die check
    does not keep: P(a die partly hidden, against a phantom), on :func:`hidden_rows` beside the
    frame's faces; None: they are dropped."""
    layer_weight: Features | None = None
    """(D, H): the standardised features to H units, None for a check without a layer."""
    layer_bias: Features | None = None
    """(H,): the units' biases, with :attr:`layer_weight`."""
    leaning: DieCheck | None = None
    """The check for boxes read as a face: P(a die leaning, not flat), on :func:`hidden_rows`;
    None: none is called ``cocked`` for it."""

    def probability(self, features: Features) -> Features:
        """P(a die) for each row of ``features`` (N, D).

        >>> check = DieCheck("", "f", np.zeros(2, np.float32), np.ones(2, np.float32),
        ...                  np.array([4.0, -4.0], np.float32), 0.0, 0.5)
        >>> [round(float(p), 2) for p in check.probability(np.array([[1, 0], [0, 1]], np.float32))]
        [0.98, 0.02]
        """
        # In float64 (BLAS and exp round float32's last bit by the processor), then float32.
        z = (np.asarray(features, np.float64) - self.mean) / self.scale
        if self.layer_weight is not None and self.layer_bias is not None:
            z = np.maximum(z @ self.layer_weight + self.layer_bias, 0.0)
        z = z @ self.weight + self.bias
        return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0))), np.float32)

    def judge(
        self, features: Features, sharpness: Features
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Whether each box (its features and :func:`vision.preprocess.sharpness`) is a die, and
        whether a blurred one: those below :data:`BLURRED_BELOW` go to :attr:`blurred`."""
        dies = self.probability(features) >= self.threshold
        if self.blurred is None:
            return dies, np.zeros(len(dies), np.bool_)
        blurred = sharpness < BLURRED_BELOW
        dies[blurred] = self.blurred.probability(features[blurred]) >= self.blurred.threshold
        return dies, blurred & dies

    def to_json(self) -> dict[str, Any]:
        """The check as the JSON object :meth:`from_json` reads."""
        return (
            {
                "features_sha256": self.features_sha256,
                "features": self.features,
                "threshold": self.threshold,
                "bias": self.bias,
                "mean": [float(v) for v in self.mean],
                "scale": [float(v) for v in self.scale],
                "weight": [float(v) for v in self.weight],
            }
            | (
                {}
                if self.layer_weight is None or self.layer_bias is None
                else {
                    "layer_weight": [[float(v) for v in row] for row in self.layer_weight],
                    "layer_bias": [float(v) for v in self.layer_bias],
                }
            )
            | {
                key: check.to_json()
                for key, check in (
                    ("blurred", self.blurred),
                    ("hidden", self.hidden),
                    ("hidden_dropped", self.hidden_dropped),
                    ("leaning", self.leaning),
                )
                if check is not None
            }
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DieCheck:
        """The check in ``data``; ``ValueError`` says what is missing or inconsistent."""
        try:
            mean, scale, weight = (
                np.asarray(data[key], np.float32) for key in ("mean", "scale", "weight")
            )
            check = cls(
                str(data["features_sha256"]),
                str(data["features"]),
                mean,
                scale,
                weight,
                float(data["bias"]),
                float(data["threshold"]),
                None if data.get("blurred") is None else cls.from_json(data["blurred"]),
                None if data.get("hidden") is None else cls.from_json(data["hidden"]),
                None
                if data.get("hidden_dropped") is None
                else cls.from_json(data["hidden_dropped"]),
                layer_weight=None
                if data.get("layer_weight") is None
                else np.asarray(data["layer_weight"], np.float32),
                layer_bias=None
                if data.get("layer_bias") is None
                else np.asarray(data["layer_bias"], np.float32),
                leaning=None if data.get("leaning") is None else cls.from_json(data["leaning"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"not a die check: {err!r}") from err
        layer, units = check.layer_weight, check.layer_bias
        if (layer is None) != (units is None):
            raise ValueError("not a die check: it has a layer's weights or biases, not both")
        if layer is not None and units is not None:
            if layer.ndim != 2 or layer.shape != (len(mean), len(units)) or units.ndim != 1:
                raise ValueError(
                    f"not a die check: its layer has weights of shape {layer.shape} and"
                    f" biases of shape {units.shape}, not ({len(mean)}, H) and (H,)"
                )
            if weight.shape != units.shape:
                raise ValueError(
                    f"not a die check: {len(weight)} weights for its layer's {len(units)} units"
                )
        # Without a layer, the weights read the features; with one, its units (checked above).
        read = weight.shape if layer is None else mean.shape
        if not mean.shape == scale.shape == read or mean.ndim != 1:
            raise ValueError(
                f"not a die check: mean, scale and weight have shapes {mean.shape}, {scale.shape}"
                f" and {weight.shape}, not one length"
            )
        inner = check.blurred
        if inner is not None and (inner.features, inner.features_sha256, inner.mean.shape) != (
            check.features,
            check.features_sha256,
            check.mean.shape,
        ):
            raise ValueError("not a die check: its blurred-die check reads other features")
        rows = len(check.mean) + HIDDEN_EXTRAS
        for what, inner in (
            ("partly-hidden", check.hidden),
            ("partly-hidden", check.hidden_dropped),
            ("leaning-face", check.leaning),
        ):
            if inner is not None and (
                (inner.features, inner.features_sha256) != (check.features, check.features_sha256)
                or len(inner.mean) not in (rows, rows + EDGE_FEATURES)
            ):
                raise ValueError(
                    f"not a die check: its {what} check reads other features (it reads"
                    f" the die check's {len(check.mean)} and {HIDDEN_EXTRAS} more, or"
                    f" {HIDDEN_EXTRAS + EDGE_FEATURES} more with the crop's edges)"
                )
        return check


def fit_die_check(
    features: Features,
    is_die: npt.NDArray[np.bool_],
    *,
    features_sha256: str,
    features_name: str,
    l2: float = 0.01,
    threshold: float = 0.9,
    steps: int | None = None,
    rate: float | None = None,
    units: int = 0,
    seed: int = 0,
) -> DieCheck:
    """Fit a check on (features, is_die) by full-batch gradient descent on the cross-entropy,
    each class weighing half (there are many more phantoms than leaning dice), with ``l2``
    on the weights of the standardised features. Deterministic: the same rows give the same check.

    ``steps`` and ``rate`` default to 2000 of 0.5. With ``units``, a layer of that many ReLU
    units lies between the features and the output (:func:`_fit_layer`; ``steps`` and
    ``rate`` are then Adam's, 1000 of 0.01 unless given, and ``seed`` draws the start).

    >>> x = np.array([[0.0, 1.0], [0.2, 0.9], [1.0, 0.0], [0.9, 0.1]], np.float32)
    >>> check = fit_die_check(x, np.array([True, True, False, False]), features_sha256="",
    ...                       features_name="f")
    >>> [bool(p >= check.threshold) for p in check.probability(x)]
    [True, True, False, False]
    """
    if len(features) != len(is_die):
        raise ValueError(f"{len(features)} feature rows for {len(is_die)} labels")
    if is_die.all() or not is_die.any():
        raise ValueError("fitting a die check needs both dice and boxes that are none")
    x = features.astype(np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    x = (x - mean) / scale
    y = is_die.astype(np.float64)
    weights = np.where(is_die, 0.5 / y.mean(), 0.5 / (1.0 - y.mean())) / len(y)
    layer: npt.NDArray[np.float64] | None = None
    layer_bias: npt.NDArray[np.float64] | None = None
    if units > 0:
        layer, layer_bias, w, b = _fit_layer(
            x,
            y,
            weights,
            units=units,
            l2=l2,
            steps=1000 if steps is None else steps,
            rate=0.01 if rate is None else rate,
            seed=seed,
        )
    else:
        steps, rate = 2000 if steps is None else steps, 0.5 if rate is None else rate
        w = np.zeros(x.shape[1])
        b = 0.0
        for _ in range(steps):
            p = 1.0 / (1.0 + np.exp(-np.clip(x @ w + b, -60.0, 60.0)))
            grad = (p - y) * weights
            w -= rate * (x.T @ grad + l2 * w)
            b -= rate * float(grad.sum())
    return DieCheck(
        features_sha256,
        features_name,
        mean.astype(np.float32),
        scale.astype(np.float32),
        w.astype(np.float32),
        float(b),
        threshold,
        layer_weight=None if layer is None else layer.astype(np.float32),
        layer_bias=None if layer_bias is None else layer_bias.astype(np.float32),
    )


def _fit_layer(
    x: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    *,
    units: int,
    l2: float,
    steps: int,
    rate: float,
    seed: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], float]:
    """A layer of ``units`` ReLU units and the output on it, fitted to the weighted
    cross-entropy by full-batch Adam (``steps`` of ``rate``), ``l2`` on both weight matrices;
    the start drawn from ``seed`` (He's scale). Returns the layer's weights and biases, the
    output's weights and bias."""
    rng = np.random.default_rng(seed)
    params = [
        rng.normal(0.0, np.sqrt(2.0 / x.shape[1]), (x.shape[1], units)),
        np.zeros(units),
        rng.normal(0.0, np.sqrt(1.0 / units), units),
        np.zeros(1),
    ]
    first = [np.zeros_like(p) for p in params]
    second = [np.zeros_like(p) for p in params]
    for step in range(1, steps + 1):
        layer, layer_bias, w, b = params
        before = x @ layer + layer_bias
        hidden = np.maximum(before, 0.0)
        p = 1.0 / (1.0 + np.exp(-np.clip(hidden @ w + b[0], -60.0, 60.0)))
        grad = (p - y) * weights
        back = np.outer(grad, w) * (before > 0.0)
        grads = [x.T @ back + l2 * layer, back.sum(axis=0), hidden.T @ grad + l2 * w]
        grads.append(np.array([grad.sum()]))
        for param, g, m, v in zip(params, grads, first, second, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            param -= rate * (m / (1.0 - 0.9**step)) / (np.sqrt(v / (1.0 - 0.999**step)) + 1e-8)
    return params[0], params[1], params[2], float(params[3][0])


def load_die_check(path: Path) -> DieCheck:
    """The check in ``path``; ``ModelLoadError`` names the file and what to do."""
    what = "restore models/die_check.json or fit it again (python -m vision.train.die_check)"
    try:
        return DieCheck.from_json(json.loads(path.read_text("utf-8")))
    except (OSError, ValueError) as err:
        raise ModelLoadError(f"cannot load the die check {str(path)!r}: {err}; {what}") from err


class Judgement(NamedTuple):
    """The die check's judgement of a frame's boxes (:meth:`DieChecker.judge_frame`), one
    flag a box; False where a check was not asked."""

    dies: npt.NDArray[np.bool_]
    """Of the "no face" boxes: a die (leaning, or blurred)."""
    blurred: npt.NDArray[np.bool_]
    """Of those: a die blurred past reading."""
    hidden: npt.NDArray[np.bool_]
    """Of the faces: a die partly hidden."""
    hidden_dropped: npt.NDArray[np.bool_]
    """Of the boxes the reader would drop (:func:`dropped`): a die partly hidden."""
    leaning: npt.NDArray[np.bool_]
    """Of the faces: a die leaning, its face not the throw's."""

    @classmethod
    def nothing(cls, count: int) -> Judgement:
        """``count`` boxes, none flagged: a frame no check was asked about."""
        return cls(*(np.zeros(count, np.bool_) for _ in cls._fields))


class DieChecker:
    """A die check run on its face model: the first member's features, then the regression."""

    def __init__(
        self,
        model_path: Path,
        check: DieCheck,
        *,
        threads: int = 1,
        first: wire.Model | None = None,
    ) -> None:
        """Check that ``model_path``'s first member computes the features the check names
        (``ModelLoadError`` if not); its session is opened when features are first asked for.
        ``first``: that member, when the caller has read it already.
        """
        if first is None:
            first = _first_member(model_path)
        produced = {out for node in first.graph.nodes for out in node.outputs}
        if check.features not in produced:
            raise ModelLoadError(
                f"face model {str(model_path)!r} has no tensor {check.features!r}, which the die"
                " check reads; fit the check to this model (python -m vision.train.die_check)"
            )
        first = with_outputs(first, check.features, replace=True)
        self.check = check
        self.model_path = model_path
        self._threads = threads
        # Kept serialised, not as a session: a reader whose face model gives the features itself
        # (:meth:`reads_features_of`) never opens it, and spares the member's second copy.
        self._member: bytes | None = first.serialize()
        self._session: Any = None
        self._lock = threading.Lock()

    def reads_features_of(self, classifier: object) -> TypeGuard[OnnxClassifier]:
        """Whether ``classifier`` gives, with its reading, the features this check reads
        (:meth:`vision.classify.OnnxClassifier.predict_with_features`): it runs this check's
        model file, and its first member's features are the check's tensor."""
        return (
            isinstance(classifier, OnnxClassifier)
            and classifier.features_tensor == self.check.features
            and classifier.path.resolve() == self.model_path.resolve()
        )

    def features(self, crops: npt.NDArray[np.float32]) -> Features:
        """The (N, D) features the check reads, for face-model crops (N, 3, 64, 64)."""
        if len(crops) == 0:
            return np.zeros((0, len(self.check.mean)), np.float32)
        (out,) = self._opened().run(
            [self.check.features], {"image": np.ascontiguousarray(crops, np.float32)}
        )
        return np.asarray(out, np.float32).reshape(len(crops), -1)

    def _opened(self) -> Any:
        """The session on the first member, opened on first use (once, whichever thread asks)."""
        with self._lock:
            if self._session is None:
                import onnxruntime

                self._session = onnxruntime.InferenceSession(
                    self._member,
                    sess_options=session_options(self._threads),
                    providers=["CPUExecutionProvider"],
                )
                self._member = None
            return self._session

    def die_probability(self, crops: npt.NDArray[np.float32]) -> Features:
        """P(a die) for each crop (to compare with ``self.check.threshold``)."""
        if len(crops) == 0:
            return np.zeros(0, np.float32)
        return self.check.probability(self.features(crops))

    def is_die(self, crops: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
        """Whether the check takes each crop for a die."""
        return self.judge(crops)[0]

    def judge(
        self, crops: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Whether the check takes each crop for a die, and whether for a blurred one.

        A crop blurred past reading goes to the blurred-die check if there is one: the
        leaning-die check was fitted on sharp dice and turns blurred ones down as phantoms.
        """
        # Without a blurred-die check every box is judged alike: nothing to measure.
        sharp = np.ones(len(crops), np.float32) if self.check.blurred is None else sharpness(crops)
        return self.check.judge(self.features(crops), sharp)

    def judge_frame(
        self,
        crops: npt.NDArray[np.float32],
        boxes: Sequence[Box],
        probs: Features,
        *,
        features: Features | None = None,
    ) -> Judgement:
        """For every located box of one frame, read as ``probs`` by the face model: whether a
        "no face" box is a die and whether a blurred one (:meth:`judge`); whether a box read
        as a face is a die partly hidden, and whether one leaning; and whether a box the reader
        would drop (:func:`dropped`) is a die partly hidden (False where a check is not asked).
        One run of the model for all, none if the face model's reading gave the crops'
        ``features`` (:meth:`reads_features_of`).
        """
        count = len(crops)
        if features is not None and features.shape != (count, len(self.check.mean)):
            raise ValueError(
                f"features of shape {features.shape} for {count} crops; the check reads"
                f" {len(self.check.mean)} features a crop"
            )
        check = self.check
        judged = Judgement.nothing(count)
        nowhere = np.zeros(count, np.bool_)
        noface = np.asarray(probs.argmax(axis=1) == 0, np.bool_) if count else nowhere
        face = ~noface if check.hidden is not None else nowhere
        leaning = ~noface if check.leaning is not None else nowhere
        drop = dropped(probs) if check.hidden_dropped is not None else nowhere
        asked = noface | face | leaning | drop
        if not asked.any():
            return judged
        if features is None:
            features = np.zeros((count, len(check.mean)), np.float32)
            features[asked] = self.features(crops[asked])
        if noface.any():
            sharp = np.ones(int(noface.sum()), np.float32)
            if check.blurred is not None:
                sharp = sharpness(crops[noface])
            judged.dies[noface], judged.blurred[noface] = check.judge(features[noface], sharp)
        faces = [boxes[int(i)] for i in np.flatnonzero(~noface)]
        # The partly-hidden and leaning checks of the faces read the same rows: made once.
        made: dict[tuple[bytes, bool], Features] = {}
        for flags, these, inner in (
            (judged.hidden, face, check.hidden),
            (judged.hidden_dropped, drop, check.hidden_dropped),
            (judged.leaning, leaning, check.leaning),
        ):
            if inner is None or not these.any():
                continue
            edges = len(inner.mean) > len(check.mean) + HIDDEN_EXTRAS
            key = (these.tobytes(), edges)
            if key not in made:
                made[key] = hidden_rows(
                    features[these],
                    [boxes[int(i)] for i in np.flatnonzero(these)],
                    probs[these],
                    reference=faces,
                    crops=crops[these] if edges else None,
                )
            flags[these] = inner.probability(made[key]) >= inner.threshold
        return judged


def die_checker_for(
    model_path: Path, *, threads: int = 1, check_path: Path = DEFAULT_DIE_CHECK
) -> DieChecker | None:
    """The check for the face model at ``model_path``, or None: no check file, or one fitted to
    another model (a tuned one, say: its features may differ). Loaded once per model file."""
    if not check_path.is_file() or not model_path.is_file():
        return None
    model, check = model_path.stat(), check_path.stat()
    return _checker(
        str(model_path.resolve()),
        str(check_path.resolve()),
        (model.st_mtime_ns, model.st_size, check.st_mtime_ns, check.st_size),
        threads,
    )


@functools.lru_cache(maxsize=8)
def _checker(
    model: str, check_path: str, versions: tuple[int, ...], threads: int
) -> DieChecker | None:
    """The checker of one version of a model file and a check file (their times and sizes
    name the versions)."""
    del versions  # only the cache's key
    check = load_die_check(Path(check_path))
    # Read once for both: the digest that says the check fits, and the checker's own member.
    try:
        first = _first_member(Path(model))
        name, digest = _features_of(first, Path(model))
    except ModelLoadError:
        return None  # unreadable, or no last linear layer: not a model any check is fitted to
    if (name, digest) != (check.features, check.features_sha256):
        return None
    return DieChecker(Path(model), check, threads=threads, first=first)
