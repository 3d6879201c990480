# The two commands the README promises: `make book` and `make test`, from a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SCALE  ?= smoke
# e.g. BOOKFLAGS="--render-only" or BOOKFLAGS="--publish"
BOOKFLAGS ?=

.PHONY: setup engine images book test clean

$(BIN)/dbexp: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

setup: $(BIN)/dbexp
	bash scripts/setup-host.sh

engine: setup
	$(BIN)/dbexp engine

images: engine
	$(BIN)/dbexp images build

book: engine
	$(BIN)/dbexp book --scale $(SCALE) $(BOOKFLAGS)

test: engine
	$(BIN)/python -m pytest -ra $(PYTEST_ARGS)

clean:
	-$(BIN)/dbexp clean
	rm -rf book/_build book/*.ipynb
