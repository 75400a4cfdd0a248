# Two commands do everything on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# On a Pi, picamera2 and lgpio come from apt and match the system's libcamera: the venv sees them
# only when made with --system-site-packages (its own packages still come first).
VENV_FLAGS := $(shell $(PYTHON) -c "import picamera2" >/dev/null 2>&1 && echo --system-site-packages)

.PHONY: run play test lint types pytest bench clean

$(STAMP): pyproject.toml
	bash scripts/system-deps.sh
	bash scripts/browser-deps.sh
	$(PYTHON) -m venv $(VENV_FLAGS) $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The table: the Pi camera where there is one, else the embedded recorded table; buttons on the
# keyboard; the scoreboard on http://<this machine>:8000/.
run: $(STAMP)
	$(BIN)/pipcam run $(RUN_ARGS)

# A game at the terminal, typing the dice: make play GAME=general PLAYERS="Ann Bob"
play: $(STAMP)
	$(BIN)/pipcam play $(or $(GAME),general) --players $(or $(PLAYERS),Ann Bob)

test: $(STAMP) lint types pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

types: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest

bench: $(STAMP)
	$(BIN)/pytest -m benchmark -s -p no:randomly

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
