# bytepair — the two commands for a fresh machine:
#   make demo   set up .venv, build the release extension, train on the Python stdlib sources, show the result
#   make test   set up .venv with the test dependencies, build, run make lint, cargo test and pytest
# and: make lint (ruff, ruff format --check, mypy --strict, clippy, rustfmt --check), make build (just the
# extension into .venv), make bench (training), make bench-encode (encoding), make bench-genome (DNA: E. coli
# and synthetic genomes vs HF tokenizers and SentencePiece), make clean.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# Stamps record that a set of Python dependencies is installed; they are redone when pyproject.toml changes.
BUILD_DEPS := $(VENV)/.build-deps
TEST_DEPS  := $(VENV)/.test-deps
BENCH_DEPS := $(VENV)/.bench-deps
SOURCES := $(shell find src python -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' \)) Cargo.toml pyproject.toml
BUILT  := $(VENV)/.built

.PHONY: demo test lint build bench bench-encode bench-genome clean

demo: $(BUILT)
	$(PY) -m bytepair.demo

test: lint
	cargo test --quiet
	$(PY) -m pytest -q

# The checks every change passes (part of make test): Python style and types, Rust lints and formatting.
PY_SOURCES := python tests bench
lint: $(BUILT) $(TEST_DEPS)
	$(BIN)/ruff check $(PY_SOURCES)
	$(BIN)/ruff format --check $(PY_SOURCES)
	$(PY) -m mypy --strict python/bytepair
	PYO3_PYTHON=$(abspath $(PY)) cargo clippy --quiet --all-targets --features python -- -D warnings
	cargo fmt --check

build: $(BUILT)

# make bench BENCH_ARGS=--quick (or --case dna, --only hf, ...): see bench/train.py.
bench: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/train.py $(BENCH_ARGS)

# make bench-genome GENOME_ARGS=--quick (or --case scaling, --only bytepair-fasta, ...): see bench/genome.py.
bench-genome: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/genome.py $(GENOME_ARGS)

# make bench-encode ENCODE_ARGS=--quick (or --case worst, --only gigatoken, --encoding o200k_base, ...): see
# bench/encode.py.
bench-encode: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/encode.py $(ENCODE_ARGS)

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

$(BUILD_DEPS): pyproject.toml | $(VENV)/bin/activate
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" "regex>=2023.0"
	touch $@

$(TEST_DEPS): pyproject.toml | $(VENV)/bin/activate
	$(PY) -m pip install --quiet "pytest>=7" "hypothesis>=6" "tokenizers>=0.15" "tiktoken>=0.7" numpy "datasets>=2" transformers \
		"mypy>=1.8" "ruff>=0.15" types-regex "selenium>=4.11" matplotlib
	touch $@

# The peers the benchmarks compare with (and their charts); only the benchmarks need them, not the tests.
# Training: tokenizers, sentencepiece, rustbpe, bpeasy. Encoding: gigatoken, tiktoken, tokie (and, with
# --extra-peers, tokenizers, rs-bpe, bpe-openai, kitoken).
$(BENCH_DEPS): pyproject.toml Makefile | $(VENV)/bin/activate
	$(PY) -m pip install --quiet "tokenizers>=0.15" "sentencepiece>=0.2" "rustbpe>=0.1" "bpeasy>=0.1.6" matplotlib \
		"tiktoken>=0.7" "tokie>=0.1.4" "rs-bpe>=0.1" "bpe-openai>=0.1.4" "kitoken>=0.11" "gigatoken>=0.10" numpy
	touch $@

# maturin develop builds the release extension and installs it (editable) into .venv.
$(BUILT): $(BUILD_DEPS) $(SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(BIN)):$$PATH $(BIN)/maturin develop --release --quiet
	touch $@

clean:
	rm -rf $(VENV) target
