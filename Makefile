# Two entry points for a fresh machine with Python 3.11+, make (and Node.js 20 for the tests):
#   make demo   the main job on the embedded default
#   make test   lint, type-check and the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

NODE_DEPS := clients/node/node_modules/.package-lock.json

.PHONY: demo test lint typecheck pytest bench mutation reference clean

$(STAMP): pyproject.toml setup.py $(wildcard engine/twistarena/rl/csrc/*) $(wildcard proto/twistarena/wire/csrc/*)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,rl,openspiel]'
	touch $(STAMP)

# The engine's compiled modules and the extensions (setup.py) are built from their
# sources: rebuilt when they change, so that what runs is never older than the source.
COMPILED := $(VENV)/.compiled
$(COMPILED): $(STAMP) $(wildcard engine/twistarena/engine/*.py engine/twistarena/engine/*/*.py \
		engine/twistarena/rl/csrc/* engine/twistarena/rl/spielcsrc/* proto/twistarena/wire/csrc/*)
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(COMPILED)

# The Node.js sample agent (tests play it against Python bots).
$(NODE_DEPS): clients/node/package.json clients/node/package-lock.json
	npm ci --prefix clients/node --no-audit --no-fund

demo: $(COMPILED)
	$(BIN)/twistarena demo --narrate

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

# The in-process layers' tests (rules, bots, ratings, learning environments) hold no
# timed assertion and share nothing, so they run on both cores. So do the other tests
# that start their own servers on free ports and check no time or rate (a file's tests
# stay in one process, which starts its module's servers once); the tests marked
# `clock` or `serial` (faults of whole clusters, loads, soaks: tests/conftest.py)
# run one test at a time, as their timings assume.
IN_PROCESS_TESTS := tests/engine tests/bots tests/league tests/rl
ONE_AT_A_TIME    := clock or serial

# The engine's tests and the leak-differential tests run on the rules' .py source
# first (what `make mutation` mutates), then, with everything else, compiled.
INTERPRETED_TESTS := tests/engine tests/security/test_leak_differential_wire.py

pytest: $(COMPILED) $(NODE_DEPS)
	$(BIN)/pytest -q -n 2 --engine=interpreted $(INTERPRETED_TESTS)
	$(BIN)/pytest -q -n 2 $(IN_PROCESS_TESTS)
	$(BIN)/pytest -q -n 2 --dist loadfile -m "not ($(ONE_AT_A_TIME))" \
		$(addprefix --ignore=,$(IN_PROCESS_TESTS))
	$(BIN)/pytest -q -m "$(ONE_AT_A_TIME)" $(addprefix --ignore=,$(IN_PROCESS_TESTS))

test: lint typecheck pytest

bench: $(COMPILED)
	$(BIN)/twistarena bench engine
	$(BIN)/twistarena bench rl --peers

# Mutation testing of engine/ with the engine's tests (slow: on demand, never in `make test`).
# One process at the lowest priority; MODULES="core twhist.state" narrows it.
# The last result is recorded in docs/mutation.md.
MUTMUT := $(VENV)/.mutmut
$(MUTMUT): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[mutation]'
	touch $(MUTMUT)

mutation: $(MUTMUT)
	$(BIN)/python tests/mutation.py run $(MODULES)
	$(BIN)/python tests/mutation.py summary $(MODULES)

# docs/protocol-reference.md from the .proto comments (a test fails when it is stale).
reference: $(STAMP)
	$(BIN)/python proto/reference.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache clients/node/node_modules
