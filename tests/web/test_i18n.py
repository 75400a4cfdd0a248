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
# Russian "one" is not English "one" (it is 21 and 31 too), so it may add that form to any key.
EXTRA_PLURALS = {"cs": ("few", "many"), "pl": ("few", "many"), "ru": ("one", "few", "many")}


@pytest.mark.parametrize("path", sorted((STATIC / "i18n").glob("*.json")), ids=lambda p: p.stem)
def test_every_language_has_the_english_keys(path: Path) -> None:
    keys = set(json.loads(path.read_text(encoding="utf-8")))
    assert sorted(ENGLISH - keys) == []
    forms = {f"{key}_{form}" for key in ENGLISH for form in EXTRA_PLURALS.get(path.stem, ())}
    assert sorted(keys - ENGLISH - forms) == []


@pytest.mark.parametrize("path", sorted((STATIC / "i18n").glob("*.json")), ids=lambda p: p.stem)
def test_no_key_is_given_twice(path: Path) -> None:
    """JSON keeps the last of two equal keys without a word: the first one's words would be
    lost (two changes adding the same key, merged)."""
    pairs: list[tuple[str, object]] = json.loads(
        path.read_text(encoding="utf-8"), object_pairs_hook=lambda items: items
    )
    keys = [key for key, _ in pairs]
    assert sorted({key for key in keys if keys.count(key) > 1}) == []


def test_every_key_the_page_uses_is_there() -> None:
    """Keys in the HTML's data-i18n and in literal t("...") calls of the scripts."""
    used = set(re.findall(r'data-i18n="([^"]+)"', (STATIC / "index.html").read_text()))
    for script in STATIC.glob("*.js"):
        used |= set(re.findall(r'\bt\("([a-z_]+\.[a-z_0-9.]+)"', script.read_text()))
    assert {"teach.title", "teach.missed", "teach.zoom"} <= used  # both kinds are found
    assert sorted(used - ENGLISH) == []


def _words(lang: str) -> dict[str, str]:
    words: dict[str, str] = json.loads((STATIC / "i18n" / f"{lang}.json").read_text("utf-8"))
    return words


LANGUAGES = sorted(p.stem for p in (STATIC / "i18n").glob("*.json"))


def server_codes() -> list[str]:
    """Every refusal code the server can send: the engines', the table's (imported here)."""
    import pipcam.table  # noqa: F401  (defines the table's codes)
    import web.app  # noqa: F401
    from scoring.errors import refusal_codes

    return sorted(refusal_codes())


def test_the_server_has_refusal_codes() -> None:
    codes = server_codes()
    assert {"stale", "game_over", "wrong_dice_count", "roll_zone_count"} <= set(codes)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_refusal_code_has_words_in_every_language(lang: str) -> None:
    """A phone words every refusal and problem the server sends in its own language."""
    words = _words(lang)
    assert [code for code in server_codes() if f"refusal.{code}" not in words] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_camera_notice_has_words_in_every_language(lang: str) -> None:
    """What the camera asks of the table's owner (a lamp, the tray, the focus) is worded too."""
    from pipcam.table import CAMERA_NOTICES

    words = _words(lang)
    assert sorted(n for n in CAMERA_NOTICES if f"camera.notice.{n}" not in words) == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_translation_fills_only_the_placeholders_english_has(lang: str) -> None:
    """A misspelt {name} would be shown as it is."""
    english, words = _words("en"), _words(lang)
    wrong = {}
    for key, text in words.items():
        base = re.sub(r"_(zero|one|two|few|many|other)$", "", key)
        allowed = set(re.findall(r"\{(\w+)\}", english.get(key, english.get(base, ""))))
        allowed.add("n")  # a plural form may name its number
        if not set(re.findall(r"\{(\w+)\}", text)) <= allowed:
            wrong[key] = text
    assert wrong == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_turn_event_and_note_has_words_in_every_language(lang: str) -> None:
    """The engines' events (a throw, a pass, four 2s) and notes (a bolt, the barrel, a break)."""
    from scoring.jeopardy import EVENT_KINDS, NoteKind

    words = _words(lang)
    keys = [f"ev.{kind}" for kind in EVENT_KINDS] + [f"ev.note.{kind}" for kind in NoteKind]
    assert [key for key in keys if key not in words] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_drapky_figure_says_what_it_needs(lang: str) -> None:
    """A figure the dice do not make is refused with what it needs, in the page's words."""
    from scoring.games.drapky import FIGURES

    words = _words(lang)
    assert [f for f in FIGURES if f"need.{f}" not in words] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_side_of_a_triangle_cell_has_words_in_every_language(lang: str) -> None:
    """A stone whose side does not match is refused naming that side (words.js NAMED.side)."""
    from scoring.games.triangles.lattice import DOWN_SIDES, UP_SIDES

    words = _words(lang)
    keys = [f"tri.side_{side}" for side in sorted({*UP_SIDES, *DOWN_SIDES})]
    assert [key for key in keys if key not in words] == []


# Languages whose counts take three forms (CLDR one, few and many: Russian 1 and 21 кость,
# 2-4 кости, 0 and 5-20 костей), the plain key being the form for fractions.
THREE_FORMS = ["ru"]


@pytest.mark.parametrize("lang", THREE_FORMS)
def test_a_counted_word_has_all_three_forms(lang: str) -> None:
    """A key with one form of a count has the others, and every English count is counted."""
    words = _words(lang)
    form = re.compile(r"_(one|few|many)$")
    counted = {form.sub("", key) for key in words if form.search(key)}
    counted |= {key.removesuffix("_one") for key in ENGLISH if key.endswith("_one")}
    missing = [f"{key}_{f}" for key in sorted(counted) for f in ("one", "few", "many")]
    assert [key for key in missing if key not in words] == []


@pytest.mark.parametrize("lang", THREE_FORMS)
def test_the_one_form_names_its_number(lang: str) -> None:
    """Russian "one" is 21 and 31 as well as 1, so its form says {n} where English says 1."""
    words = _words(lang)
    assert [key for key, text in words.items() if key.endswith("_one") and "{n}" not in text] == []


def option_docs() -> dict[str, str]:
    """Every option of every game, by its page key ``opt.<game>.<option>``, with its doc."""
    from scoring.core import describe_options
    from scoring.registry import available

    return {
        f"opt.{cls.game_id}.{info.name}": info.doc
        for cls in available()
        for info in describe_options(cls.options_type)
    }


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_games_option_has_its_help_in_every_language(lang: str) -> None:
    """The new-game form says what each option does in the page's language (words.js
    optionHelp), not in the engine's English doc."""
    words = _words(lang)
    assert [key for key in option_docs() if key not in words] == []


def test_the_english_help_of_an_option_is_its_doc() -> None:
    """The page's English is the engine's doc, so a doc changed in scoring/ is changed here too
    (and its translations looked at)."""
    english = _words("en")
    docs = option_docs()
    assert {key: english.get(key) for key in docs} == docs
    assert len(docs) > 50


def option_words() -> set[str]:
    """The page's keys for every option's name (``opt_name.<game>.<option>``) and every choice
    that is a word (``opt_choice.<game>.<option>.<value>``; a number is shown as it is)."""
    from scoring.registry import available
    from web.schemas import GamePublic

    keys: set[str] = set()
    for cls in available():
        for option in GamePublic.of(cls).options:
            keys.add(f"opt_name.{cls.game_id}.{option.name}")
            for value in option.choices or []:
                if isinstance(value, str):
                    keys.add(f"opt_choice.{cls.game_id}.{option.name}.{value}")
    return keys


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_option_and_choice_has_its_name_in_every_language(lang: str) -> None:
    """The new-game form names each option and each choice in the page's language (words.js
    optionName, choiceWord): an option or choice added in scoring/ fails here until it has
    words, and one taken away leaves none behind."""
    words = {key for key in _words(lang) if key.startswith(("opt_name.", "opt_choice."))}
    expected = option_words()
    assert (sorted(expected - words), sorted(words - expected)) == ([], [])
    assert len(expected) > 90


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_end_reason_has_words_in_every_language(lang: str) -> None:
    """Why a game ended (scoring.core.EndReason) is told in the page's language (words.js
    wordEnding), at the end of the game and among the earlier games."""
    from scoring.core import EndReason

    words = _words(lang)
    assert [code for code in EndReason if f"end.{code}" not in words] == []


# Where a player's name stands: the placeholders that carry one ({name} is also a category's
# name in a few keys; a category followed by a past tense would be just as wrong), and the keys
# the page shows right after a name ("Ann: hodil 3 5" in the history, the tags beside a name, a
# 1000 player's state), which are checked as if they began with the name.
PLAYER = r"\{(?:player|name|names)\}"
AFTER_A_NAME = ("winner", "to_move", "thousand.closed", "thousand.falls")

# Words that take the player's gender, as these files had them: a past tense or a passive
# participle right after the name (Czech hodil/hodila, je shozen; Polish wyrzucił/wyrzuciła,
# zrzucony; Russian открыл/открыла), a past tense before "игрок {player}", a pronoun for the
# player, and masculine nouns for the player (hráč, gracz, vítěz, zwycięzca, победитель).
# Russian "игрок" stays: it names a woman too and nothing here agrees with it.
GENDERED = {
    "cs": [
        rf"{PLAYER}:? \w+la?\b",
        rf"{PLAYER}:? je \w+(?:en|nut)\b",
        r"(?i)\b(?:hráč|hráče|hráči|vítěz)\b",
    ],
    "pl": [
        rf"{PLAYER}:? \w+ła?\b",
        rf"{PLAYER}:? \w+(?:ony|ona|ty|ta)\b",
        r"(?i)\b(?:gracz|gracza|graczy|zwycięzca|jego|jej)\b",
    ],
    "ru": [
        rf"{PLAYER}:? \w+ла?\b",
        rf"\w+ла? игрок {PLAYER}",
        r"(?i)\b(?:он|она|победитель)\b",
    ],
}


@pytest.mark.parametrize("lang", sorted(GENDERED))
def test_a_players_name_meets_no_word_of_one_gender(lang: str) -> None:
    """Players' names are anyone's (Ann, Bob, Jana, Piotr), so a sentence with a name must not
    have a verb, participle, pronoun or noun that agrees with it in gender: "{player} zapsal 50"
    is wrong for Ann. Words are said in the present, as a noun or after a colon instead
    ("Ann: hod 3 5", "Ann zapisuje 50"). The patterns are the kinds these files once had, not
    a grammar: a new kind needs a new pattern."""
    found = {}
    for key, text in _words(lang).items():
        if key.startswith("act.") or key in AFTER_A_NAME:
            text = "{player}: " + text
        elif not re.search(PLAYER, text):
            continue
        words = [m.group(0) for p in GENDERED[lang] for m in re.finditer(p, text)]
        if words:
            found[key] = words
    assert found == {}
