# bytepair — the two commands for a fresh machine:
#   make demo   set up .venv, build the release extension, train on the Python stdlib sources, show the result
#   make test   set up .venv with the test dependencies, build, run make lint, cargo test and pytest
# and: make lint (ruff, ruff format --check, mypy --strict, clippy, rustfmt --check), make build (just the
# extension into .venv), make bench (training), make bench-encode (encoding), make bench-genome (DNA: E. coli
# and synthetic genomes vs HF tokenizers and SentencePiece), make bench-variants (extend, sizes, SuperBPE, merge
# control vs plain training), make bench-scale (sharded encoding and training at scale vs datatrove and
# gigatoken), make bench-datasets (HF datasets forms), make fuzz (the file formats' fuzz targets for
# FUZZ_SECONDS each; part of make test), make clean.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PY     := $(BIN)/python
# Stamps record that a set of Python dependencies is installed; they are redone when pyproject.toml changes.
BUILD_DEPS := $(VENV)/.build-deps
TEST_DEPS  := $(VENV)/.test-deps
BENCH_DEPS := $(VENV)/.bench-deps
SCALE_BENCH_DEPS := $(VENV)/.scale-bench-deps
# tiktoken's own test suite, from its source release, run against bytepair's drop-in (tests/test_tiktoken_suite.py).
TIKTOKEN_SUITE := $(VENV)/peer-tests/tiktoken-0.14.0/tests/test_encoding.py
SOURCES := $(shell find src python -type f \( -name '*.rs' -o -name '*.py' -o -name '*.pyi' \)) Cargo.toml pyproject.toml
BUILT  := $(VENV)/.built

.PHONY: demo test lint build bench bench-encode bench-genome bench-variants bench-scale bench-datasets fuzz clean

demo: $(BUILT)
	$(PY) -m bytepair.demo

test: lint $(TIKTOKEN_SUITE)
	cargo test --quiet
	$(MAKE) --no-print-directory fuzz
	$(PY) -m pytest -q

# The checks every change passes (part of make test): Python style and types, Rust lints and formatting.
PY_SOURCES := python tests bench tools
lint: $(BUILT) $(TEST_DEPS)
	$(BIN)/ruff check $(PY_SOURCES)
	$(BIN)/ruff format --check $(PY_SOURCES)
	$(PY) -m mypy --strict python/bytepair
	PYO3_PYTHON=$(abspath $(PY)) cargo clippy --quiet --all-targets --features python -- -D warnings
	cargo fmt --check

build: $(BUILT)

# Coverage-guided fuzz targets, one per file format (fuzz/README.md): built with libFuzzer's instrumentation on
# the stable toolchain (for the host target, so that build scripts are not instrumented), seeded from
# ../shared/data at run time, each run for FUZZ_SECONDS; a finding fails (its input in fuzz/artifacts/).
FUZZ_SECONDS ?= 20
FUZZ_TARGETS := tiktoken hf native fasta
FUZZ_HOST = $(shell rustc -vV | sed -n 's/^host: //p')
FUZZ_RUSTFLAGS := -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
	-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
	-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing
fuzz: $(BUILT)
	cd fuzz && RUSTFLAGS="$(FUZZ_RUSTFLAGS)" cargo build --quiet --release --bins --target $(FUZZ_HOST)
	$(PY) fuzz/seeds.py fuzz/corpus
	@for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/artifacts/$$t; \
		if fuzz/target/$(FUZZ_HOST)/release/$$t fuzz/corpus/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=16384 \
			-timeout=20 -rss_limit_mb=2048 -artifact_prefix=fuzz/artifacts/$$t/ > fuzz/artifacts/$$t.log 2>&1; then \
			echo "fuzz $$t: $$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' fuzz/artifacts/$$t.log), no finding"; \
		else \
			tail -40 fuzz/artifacts/$$t.log; echo "fuzz $$t: a finding, its input in fuzz/artifacts/$$t/"; exit 1; \
		fi; \
	done

# make bench BENCH_ARGS=--quick (or --case dna, --only hf, ...): see bench/train.py.
bench: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/train.py $(BENCH_ARGS)

# make bench-variants VARIANTS_ARGS=--quick (or --rounds 3, --only superwords): see bench/train_variants.py.
bench-variants: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/train_variants.py $(VARIANTS_ARGS)

# make bench-genome GENOME_ARGS=--quick (or --case scaling, --only bytepair-fasta, ...): see bench/genome.py.
bench-genome: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/genome.py $(GENOME_ARGS)

# make bench-datasets DATASETS_ARGS=--quick (or --only train): see bench/hf_datasets.py.
bench-datasets: $(BUILT) $(BENCH_DEPS) $(TEST_DEPS)
	$(PY) bench/hf_datasets.py $(DATASETS_ARGS)

# make bench-encode ENCODE_ARGS=--quick (or --case worst, --only gigatoken, --encoding o200k_base, ...): see
# bench/encode.py.
bench-encode: $(BUILT) $(BENCH_DEPS)
	$(PY) bench/encode.py $(ENCODE_ARGS)

# make bench-scale SCALE_ARGS=--quick (100 MB corpus; default: >= 2 GB built into bench/.cache/): see bench/scale.py.
bench-scale: $(BUILT) $(SCALE_BENCH_DEPS)
	$(PY) bench/scale.py $(SCALE_ARGS)

# The scale benchmark's peers: datatrove (+ orjson) and gigatoken, beside Ray and matplotlib.
$(SCALE_BENCH_DEPS): pyproject.toml Makefile | $(VENV)/bin/activate
	$(PY) -m pip install --quiet "zstandard>=0.22" "pyarrow>=16" "ray>=2.9" "datatrove>=0.4" orjson "gigatoken>=0.10" \
		"tokenizers>=0.15" matplotlib psutil
	touch $@

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)

# numpy: the PGO build's workload (tools/pgo.py) encodes into arrays.
$(BUILD_DEPS): pyproject.toml Makefile | $(VENV)/bin/activate
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" "regex>=2023.0" numpy
	touch $@

$(TEST_DEPS): pyproject.toml | $(VENV)/bin/activate
	$(PY) -m pip install --quiet "pytest>=7" "hypothesis>=6" "tokenizers>=0.15" "tiktoken>=0.7" numpy "datasets>=2" transformers \
		"mypy>=1.8" "ruff>=0.15" types-regex "selenium>=4.11" matplotlib
	# Corpora at scale: the core's readers (zstandard, pyarrow) and the Ray engine's tests (ray).
	$(PY) -m pip install --quiet "zstandard>=0.22" "pyarrow>=16" "ray>=2.9"
	touch $@

# Fetched once, when the test dependencies are installed; the tests never download anything.
$(TIKTOKEN_SUITE): | $(VENV)/bin/activate
	mkdir -p $(VENV)/peer-tests
	$(PY) -m pip download --quiet --no-deps --no-binary :all: tiktoken==0.14.0 -d $(VENV)/peer-tests
	tar -xzf $(VENV)/peer-tests/tiktoken-0.14.0.tar.gz -C $(VENV)/peer-tests tiktoken-0.14.0/tests
	touch $@

# The peers the benchmarks compare with (and their charts); only the benchmarks need them, not the tests.
# Training: tokenizers, sentencepiece, rustbpe, bpeasy. Encoding: gigatoken, tiktoken, tokie (and, with
# --extra-peers, tokenizers, rs-bpe, bpe-openai, kitoken).
$(BENCH_DEPS): pyproject.toml Makefile | $(VENV)/bin/activate
	$(PY) -m pip install --quiet "tokenizers>=0.15" "sentencepiece>=0.2" "rustbpe>=0.1" "bpeasy>=0.1.6" matplotlib \
		"tiktoken>=0.7" "tokie>=0.1.4" "rs-bpe>=0.1" "bpe-openai>=0.1.4" "kitoken>=0.11" "gigatoken>=0.10" numpy
	touch $@

# The release extension, installed (editable) into .venv by maturin develop: with profile-guided optimisation
# (tools/pgo.py: built instrumented, run on a workload, rebuilt with its profile) when this rustc's llvm-profdata
# is installed (rustup component add llvm-tools), else built once the usual way. PGO=0 skips it.
$(BUILT): $(BUILD_DEPS) $(SOURCES) tools/pgo.py
	$(PY) tools/pgo.py build
	touch $@

clean:
	rm -rf $(VENV) target fuzz/target fuzz/corpus fuzz/artifacts
