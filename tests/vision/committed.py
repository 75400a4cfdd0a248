"""The committed photos (tests/data/dice) as a photo source of the shared data format."""

from __future__ import annotations

import json
from pathlib import Path

COMMITTED_PHOTOS = Path(__file__).resolve().parent.parent / "data" / "dice"


def photo_source(root: Path, name: str = "table", *, split: str | None = None) -> Path:
    """Make ``root/name`` a source of the committed photos (images linked, not copied), each
    photo in ``split`` (None: as labelled, the held-out split); returns ``root``."""
    source = root / name
    source.mkdir(parents=True)
    (source / "images").symlink_to(COMMITTED_PHOTOS / "images", target_is_directory=True)
    lines = (COMMITTED_PHOTOS / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    if split is not None:
        records = [{**record, "split": split} for record in records]
    (source / "labels.jsonl").write_text(
        "".join(json.dumps(record) + "\n" for record in records), encoding="utf-8"
    )
    return root
