"""Schema-driven fuzzing: schemathesis sends what the OpenAPI schema allows (and what it does
not) to a real server, with and without the PIN; no request may get a 5xx.

The schema is the one the running app serves at /openapi.json. The event stream is left out
(it never ends), and so are wrong PINs: they would slow the fuzzing client down to 429s
(the PIN guard has its own tests).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.core.result import Ok

from pipcam.store import Store
from pipcam.table import Table
from tests.pipcam.test_table_corrections import reading
from tests.web.test_api import PIN
from tests.web.test_api_more import serving

EXAMPLES = 250
"""Examples per test (PIN or not, valid or not), spread over the operations."""


SEEN: Counter[tuple[str, str, int]] = Counter()


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    """A real server for one test; the game changes as the fuzzer plays it across examples."""
    with Store(tmp_path / "pipcam.db") as store:
        table = Table(store)
        table.new_game({"game": "general", "players": ["Ann", "Bob"]})
        table.on_reading(reading(1, 1, 5, 2, 3), settled_now=True)  # something to correct
        with serving(table) as url:
            yield url
    codes = Counter(status for (_, _, status) in SEEN.elements())
    print(f"fuzz statuses: {dict(sorted(codes.items()))}")
    SEEN.clear()


@pytest.fixture
def operations(base: str) -> list[Any]:
    """Every operation of the OpenAPI schema the real server serves, but the event stream."""
    schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
    found = []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), f"the schema has an invalid operation: {result.err()}"
        found.append(result.ok())
    return [op for op in found if op.path != "/api/events"]


def check(case: Any, response: Any) -> None:
    """No 5xx; a refusal is JSON with a string ``detail`` and no traceback."""
    status = response.status_code
    SEEN[(case.method, case.path, status)] += 1
    text = response.text
    assert status < 500, f"{status}: {text[:500]}"
    assert "Traceback" not in text
    if status >= 400:
        body = json.loads(text)
        assert isinstance(body, dict), text
        assert isinstance(body.get("detail"), str), text


def strategy(operations: list[Any], mode: GenerationMode) -> st.SearchStrategy[Any]:
    """Cases for any of the operations: valid by the schema (positive) or not (negative)."""
    return st.one_of([op.as_strategy(generation_mode=mode) for op in operations])


# The schemathesis pytest plugin (from_fixture/parametrize) does not run under pytest 9, so
# its Hypothesis strategies are drawn from here instead: the same cases, one test per setting.
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,  # one server per test, on purpose
    ],
    database=None,
)
MODES = [GenerationMode.POSITIVE, GenerationMode.NEGATIVE]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@FUZZ
@given(data=st.data())
def test_no_server_errors_with_the_pin(
    operations: list[Any], mode: GenerationMode, data: st.DataObject
) -> None:
    """Every generated request, valid or not, gets an answer below 500.

    POST /api/pin is left to the run without the PIN: its wrong guesses would make the
    guard answer 429 to everything that follows.
    """
    ops = [op for op in operations if op.path != "/api/pin"]
    case = data.draw(strategy(ops, mode))
    check(case, case.call(headers={"X-Table-Pin": PIN}, timeout=10))


@pytest.mark.parametrize("mode", MODES, ids=lambda m: m.value)
@FUZZ
@given(data=st.data())
def test_no_server_errors_without_the_pin(
    operations: list[Any], mode: GenerationMode, data: st.DataObject
) -> None:
    """Without the PIN a change is refused before it reaches the table, and nothing is a 5xx."""
    case = data.draw(strategy(operations, mode))
    response = case.call(timeout=10)
    check(case, response)
    if case.method.upper() == "POST" and case.path != "/api/pin":
        # A body is read before the PIN is asked for (400, 413, 422); generated PIN headers
        # and cookies are wrong guesses (401, then 429).
        assert response.status_code in (400, 401, 413, 422, 429), response.text
