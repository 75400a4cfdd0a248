"""The phone page's words: every language names the same keys, and every key the page uses is
in English (the fallback), so no phone ever shows a bare key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

STATIC = Path(__file__).resolve().parents[2] / "web" / "static"
ENGLISH = set(json.loads((STATIC / "i18n" / "en.json").read_text(encoding="utf-8")))


# CLDR plural categories English does not have, which a language may add to an English key
# (web/static/i18n.js picks them with Intl.PluralRules): Czech "few" is 2-4, Polish "many" 5-21.
EXTRA_PLURALS = {"cs": ("few", "many"), "pl": ("few", "many")}


@pytest.mark.parametrize("path", sorted((STATIC / "i18n").glob("*.json")), ids=lambda p: p.stem)
def test_every_language_has_the_english_keys(path: Path) -> None:
    keys = set(json.loads(path.read_text(encoding="utf-8")))
    assert sorted(ENGLISH - keys) == []
    forms = {f"{key}_{form}" for key in ENGLISH for form in EXTRA_PLURALS.get(path.stem, ())}
    assert sorted(keys - ENGLISH - forms) == []


def test_every_key_the_page_uses_is_there() -> None:
    """Keys in the HTML's data-i18n and in literal t("...") calls of the scripts."""
    used = set(re.findall(r'data-i18n="([^"]+)"', (STATIC / "index.html").read_text()))
    for script in STATIC.glob("*.js"):
        used |= set(re.findall(r'\bt\("([a-z_]+\.[a-z_0-9.]+)"', script.read_text()))
    assert {"teach.title", "teach.missed", "teach.zoom"} <= used  # both kinds are found
    assert sorted(used - ENGLISH) == []
