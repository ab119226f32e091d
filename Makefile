# bytepair — the two commands for a fresh machine:
#   make demo   set up .venv, build the release extension, train on the Python stdlib sources, show the result
#   make test   set up .venv with the test dependencies, build, run cargo test and pytest
# and: make build (just the extension into .venv), make bench, make clean.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# Stamps record that a set of Python dependencies is installed; they are redone when pyproject.toml changes.
BUILD_DEPS := $(VENV)/.build-deps
TEST_DEPS  := $(VENV)/.test-deps
SOURCES := $(shell find src python -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' \)) Cargo.toml pyproject.toml
BUILT  := $(VENV)/.built

.PHONY: demo test build bench clean rust-test py-test

demo: $(BUILT)
	$(PY) -m bytepair.demo

test: $(BUILT) $(TEST_DEPS)
	cargo test --quiet
	$(PY) -m pytest -q

build: $(BUILT)

bench: $(BUILT) $(TEST_DEPS)
	$(PY) bench/train.py

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

$(BUILD_DEPS): pyproject.toml | $(VENV)/bin/activate
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" "regex>=2023.0"
	touch $@

$(TEST_DEPS): pyproject.toml | $(VENV)/bin/activate
	$(PY) -m pip install --quiet "pytest>=7" "hypothesis>=6" "tokenizers>=0.15" "tiktoken>=0.7" numpy "datasets>=2"
	touch $@

# maturin develop builds the release extension and installs it (editable) into .venv.
$(BUILT): $(BUILD_DEPS) $(SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH $(BIN)/maturin develop --release --quiet
	touch $@

clean:
	rm -rf $(VENV) target
