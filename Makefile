# The two commands the README promises: `make book` and `make test`, from a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SCALE  ?= smoke
# e.g. BOOKFLAGS="--render-only" or BOOKFLAGS="--publish"
BOOKFLAGS ?=

.PHONY: setup host engine images book test unit clean

# Host tools first: on a bare Debian even python3-venv may be missing.
host:
	bash scripts/setup-host.sh

$(BIN)/dbexp: pyproject.toml
	$(MAKE) host
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	touch $@

setup: host $(BIN)/dbexp

engine: setup
	$(BIN)/dbexp engine

images: engine
	$(BIN)/dbexp images build

book: engine
	$(BIN)/dbexp book --scale $(SCALE) $(BOOKFLAGS)

test: engine
	$(BIN)/python -m pytest -ra $(PYTEST_ARGS)

# The tests that need no server, no engine and no network (statistics, verdicts, parsers, layout): seconds.
unit: $(BIN)/dbexp
	$(BIN)/python -m pytest -ra -m unit $(PYTEST_ARGS)

clean:
	-$(BIN)/dbexp clean
	rm -rf book/_build book/*.ipynb
