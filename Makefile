# The two commands the README promises: `make book` and `make test`, from a fresh clone.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SCALE  ?= smoke
# e.g. BOOKFLAGS="--render-only" or BOOKFLAGS="--publish"
BOOKFLAGS ?=

.PHONY: setup host engine images book test unit published imports clean lint-ci

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

# The import contracts of pyproject.toml's [tool.importlinter] (layers, chapters independent, no cycles), checked by
# import-linter; what a linter cannot see is tests/unit/test_architecture.py's.
imports: $(BIN)/dbexp
	$(BIN)/lint-imports --no-cache

# Three pytest-xdist workers on 2 CPUs (TEST_WORKERS), so that one test's server start, load or fixed-length
# run overlaps another's
# (servers stay pinned: at smoke scale two may share the server CPU, and the noise rule is off there);
# then, on one worker, the tests that look at or remove every lab container (tests/conftest.py ALONE).
# Each run lists its 30 slowest steps (--durations), so that a CI log says where its minutes went.
TEST_WORKERS ?= 3
test: engine imports
	$(BIN)/python -m pytest -ra --durations=30 -n $(TEST_WORKERS) --dist loadgroup -m "not alone" $(PYTEST_ARGS)
	$(BIN)/python -m pytest -ra --durations=10 -m alone $(PYTEST_ARGS)

# The tests that need no server, no engine and no network (statistics, verdicts, parsers, layout): seconds,
# on every CPU (pytest-xdist); `make test` stays serial, since its servers are pinned to CPUs.
unit: $(BIN)/dbexp imports
	$(BIN)/python -m pytest -ra -m unit -n auto $(PYTEST_ARGS) tests/unit

# What the committed data/ show (tests/published/): verdict words and intervals per claim, the pages'
# sentences and charts. No server either; run it after `make book BOOKFLAGS=--publish`. A failure
# says "the published data changed: ...". `make test` runs it too (it collects all of tests/).
published: $(BIN)/dbexp
	$(BIN)/python -m pytest -ra -m published -n auto $(PYTEST_ARGS) tests/published

# The GitHub Actions workflow (.github/workflows/), checked by actionlint and against GitHub's
# workflow schema (check-jsonschema, in a venv of its own). Installs both on first use: actionlint
# with `go install` (Go from PATH or /usr/local/go), check-jsonschema from PyPI.
ACTIONLINT_VERSION ?= v1.7.12
GO ?= $(shell command -v go || echo /usr/local/go/bin/go)
GOBIN_DIR := $(shell $(GO) env GOPATH 2>/dev/null || echo $(HOME)/go)/bin
LINT_VENV ?= .venv-lint
lint-ci:
	@test -x $(GOBIN_DIR)/actionlint || $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION)
	$(GOBIN_DIR)/actionlint .github/workflows/*.yml
	@test -x $(LINT_VENV)/bin/check-jsonschema || { $(PYTHON) -m venv $(LINT_VENV) && \
		$(LINT_VENV)/bin/pip install -q check-jsonschema; }
	$(LINT_VENV)/bin/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

clean:
	-$(BIN)/dbexp clean
	rm -rf book/_build book/*.ipynb
