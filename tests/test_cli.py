"""The `bytepair` command line: every subcommand through `main([...])` (in process), the console script and
`python -m bytepair` through a subprocess, and the errors (one line, non-zero status, no traceback)."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path

import pytest

import bytepair
from bytepair import cli, files, reference

pytestmark = [
    pytest.mark.filterwarnings("ignore:the corpus ran out of pairs:RuntimeWarning"),
    pytest.mark.filterwarnings(r"ignore:the pattern .* matched:RuntimeWarning"),
]  # (\S+ on purpose)

CORPUS = "".join(
    f"The {w} sat on the mat, {i} times. Naïve café — 日本語 🎉 {w}s and {w}ing.\n"
    for i, w in enumerate(["cat", "dog", "bird", "fish", "lower", "lowest", "newer", "widest"] * 40)
)
SCRIPT = Path(sysconfig.get_path("scripts")) / "bytepair"


class Result:
    def __init__(self, code: int, out: bytes, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def text(self) -> str:
        return self.out.decode("utf-8")


def run(*argv: str | os.PathLike[str], stdin: bytes = b"") -> Result:
    """`bytepair ARGV` in this process, with standard input/output/error replaced by memory buffers."""
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    try:
        try:
            code = cli.main([os.fspath(a) for a in argv])
        except SystemExit as e:  # argparse: --help, bad arguments
            code = int(e.code or 0)
        sys.stdout.flush()
        sys.stderr.flush()
        out = sys.stdout.buffer.getvalue()
        err = sys.stderr.buffer.getvalue().decode("utf-8")
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return Result(code, out, err)


def run_script(
    *argv: str | os.PathLike[str], stdin: bytes = b"", module: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "bytepair"] if module else [str(SCRIPT)]
    return subprocess.run(
        command + [os.fspath(a) for a in argv],
        input=stdin,
        capture_output=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(CORPUS, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory, corpus) -> Path:
    """A folder written by `bytepair train`."""
    out = tmp_path_factory.mktemp("tok")
    result = run("train", corpus, "--vocab-size", "400", "--special-token", "<|endoftext|>", "-o", out)
    assert result.code == 0, result.err
    return out


# -- help -----------------------------------------------------------------------------------------------------


def test_help_shows_every_command_and_examples():
    result = run("--help")
    assert result.code == 0
    for command in ("train", "encode", "decode", "count", "inspect", "viz", "compare", "explain"):
        assert command in result.text
    assert "examples:" in result.text and "bytepair train corpus.txt --vocab-size" in result.text
    for command in ("train", "encode", "decode", "count", "inspect", "viz", "compare", "explain"):
        sub = run(command, "--help")
        assert sub.code == 0 and "examples:" in sub.text and f"bytepair {command}" in sub.text, command


def test_no_command_prints_help():
    result = run()
    assert result.code == 2 and "COMMAND" in result.text


# -- train --------------------------------------------------------------------------------------------------


def test_train_writes_three_formats_with_the_same_ids(trained, corpus):
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    want = bytepair.train(corpus, 400, special_tokens=["<|endoftext|>"])
    ours = bytepair.Tokenizer.load(trained / files.OUR_FILE)
    assert ours == want
    hf = bytepair.Tokenizer.from_hf(trained / files.HF_FILE)
    ranks = load_tiktoken_bpe(str(trained / files.TIKTOKEN_FILE))
    enc = tiktoken.Encoding(
        "t", pat_str=reference.PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 0}
    )
    sample = CORPUS[:3000] + " unseen wörds 12345 <|endoftext|>"
    ids = want.encode(sample, allowed_special="all")
    assert hf.encode(sample, allowed_special="all") == ids
    assert enc.encode(sample, allowed_special="all") == ids
    # The loaders accept the folder, and each file.
    for spec in (trained, trained / files.OUR_FILE, trained / files.HF_FILE):
        assert files.load_tokenizer(spec).encode(sample, allowed_special="all") == ids


def test_train_summary_reports_the_real_bytes_per_token(corpus, tmp_path):
    result = run("train", corpus, "--vocab-size", "300", "-o", tmp_path / "t")
    assert result.code == 0, result.err
    tok = bytepair.Tokenizer.load(tmp_path / "t" / files.OUR_FILE)
    tokens = len(tok.encode(CORPUS))
    lines = result.text.splitlines()
    assert lines[0].startswith("Trained in ") and repr(tok) in lines[0]
    assert f"{tok.vocab_size} tokens" in result.text and f"{len(tok.merges)} merges" in result.text
    assert f"{tokens:,} tokens, {len(CORPUS.encode()) / tokens:.2f} bytes per token" in result.text


def test_train_summary_measures_the_first_pieces_of_a_large_corpus(tmp_path, monkeypatch):
    """Bytes per token is measured on the first SUMMARY_CHARS characters (encoding a large corpus again took as
    long as training on it), and the summary says so; the ids of those pieces are those of that text."""
    from bytepair.cli import train as train_command

    documents = [f"document {i}: " + CORPUS[i * 7 : i * 7 + 300] for i in range(40)]
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"text": d}) + "\n" for d in documents), encoding="utf-8")
    limit = sum(map(len, documents[:10])) + 1  # reached during the eleventh document
    monkeypatch.setattr(train_command, "SUMMARY_CHARS", limit)
    result = run("train", path, "--vocab-size", "300", "-o", tmp_path / "t")
    assert result.code == 0, result.err
    tok = bytepair.Tokenizer.load(tmp_path / "t" / files.OUR_FILE)
    measured = documents[:11]
    tokens = sum(len(tok.encode(d)) for d in measured)
    size = sum(len(d.encode()) for d in measured)
    assert f"(on disk); its first {size:,} bytes, 11 documents -> {tokens:,} tokens," in result.text, result.text
    assert f"{size / tokens:.2f} bytes per token" in result.text
    # Under the limit, all of it, as before.
    monkeypatch.setattr(train_command, "SUMMARY_CHARS", 10**9)
    result = run("train", path, "--vocab-size", "300", "-o", tmp_path / "u")
    assert result.code == 0, result.err
    assert "40 documents ->" in result.text and "its first" not in result.text


@pytest.mark.parametrize(
    "flags, options",
    [
        (
            ["--mode", "char", "--unk-token", "[UNK]", "--pattern", "whitespace"],
            dict(mode="char", unk_token="[UNK]", pattern="whitespace"),
        ),
        (
            [
                "--mode",
                "char",
                "--continuing-subword-prefix",
                "##",
                "--lowercase",
                "--limit-alphabet",
                "30",
                "--unk-token",
                "<unk>",
            ],
            dict(mode="char", continuing_subword_prefix="##", lowercase=True, limit_alphabet=30, unk_token="<unk>"),
        ),
        (
            [
                "--end-of-word-suffix",
                "</w>",
                "--pattern",
                "none",
                "--tie-break",
                "hf",
                "--max-token-length",
                "4",
                "--vocab-size",
                "560",
            ],
            dict(end_of_word_suffix="</w>", pattern=None, tie_break="hf", max_token_length=4),
        ),
        (
            [
                "--pattern",
                "o200k",
                "--initial-alphabet",
                "corpus",
                "--min-frequency",
                "3",
                "--tie-break",
                "lexicographic",
                "--special-token",
                "<s>",
                "--special-token",
                "</s>",
            ],
            dict(
                pattern="o200k",
                initial_alphabet="corpus",
                min_frequency=3,
                tie_break="lexicographic",
                special_tokens=["<s>", "</s>"],
            ),
        ),
        (
            ["--pattern", r"\S+", "--initial-alphabet", "xyz", "--threads", "1"],
            dict(pattern=r"\S+", initial_alphabet=list("xyz"), threads=1),
        ),
    ],
    ids=["char-unk", "char-prefix-limit", "suffix-none-hf", "o200k-specials", "regex-alphabet"],
)
def test_train_flags_are_the_library_options(corpus, tmp_path, flags, options):
    size = int(flags[flags.index("--vocab-size") + 1]) if "--vocab-size" in flags else 120
    argv = ["train", corpus, "-o", tmp_path] + (["--vocab-size", str(size)] if "--vocab-size" not in flags else [])
    result = run(*argv, *flags)
    assert result.code == 0, result.err
    tok = bytepair.Tokenizer.load(tmp_path / files.OUR_FILE)
    assert tok == bytepair.train(corpus, size, **options)
    if options.get("mode") == "char":
        assert not (tmp_path / files.TIKTOKEN_FILE).exists()
    if (tmp_path / files.HF_FILE).exists():  # HF loads it with the same ids
        import tokenizers

        hf = tokenizers.Tokenizer.from_file(str(tmp_path / files.HF_FILE))
        sample = CORPUS[:2000]
        assert hf.encode(sample, add_special_tokens=False).ids == tok.encode(sample, allowed_special="all")
    else:  # what could not be written is said
        assert f"no {files.HF_FILE}: " in result.text


def test_train_from_stdin_gz_glob_and_jsonl(corpus, tmp_path):
    want = bytepair.train(corpus, 350)
    piped = run_script("train", "-", "--vocab-size", "350", "-o", tmp_path / "stdin", stdin=CORPUS.encode())
    assert piped.returncode == 0, piped.stderr
    assert bytepair.Tokenizer.load(tmp_path / "stdin" / files.OUR_FILE) == want
    with gzip.open(tmp_path / "c.txt.gz", "wt", encoding="utf-8") as f:
        f.write(CORPUS)
    assert run("train", tmp_path / "c.txt.gz", "--vocab-size", "350", "-o", tmp_path / "gz").code == 0
    assert bytepair.Tokenizer.load(tmp_path / "gz" / files.OUR_FILE) == want
    # A glob the shell did not expand, over two halves: the same words in the same order.
    lines = CORPUS.splitlines(keepends=True)
    (tmp_path / "part1.txt").write_text("".join(lines[:100]), encoding="utf-8")
    (tmp_path / "part2.txt").write_text("".join(lines[100:]), encoding="utf-8")
    assert run("train", tmp_path / "part*.txt", "--vocab-size", "350", "-o", tmp_path / "glob").code == 0
    assert bytepair.Tokenizer.load(tmp_path / "glob" / files.OUR_FILE) == want
    # JSON lines: one text per record's field (the record's other fields are ignored).
    with open(tmp_path / "c.jsonl", "w", encoding="utf-8") as f:
        for i, line in enumerate(lines):
            f.write(json.dumps({"id": i, "text": line, "meta": {"x": 1}}, ensure_ascii=i % 2 == 0) + "\n")
    result = run("train", tmp_path / "c.jsonl", "--jsonl-field", "text", "--vocab-size", "350", "-o", tmp_path / "j")
    assert result.code == 0, result.err
    assert bytepair.Tokenizer.load(tmp_path / "j" / files.OUR_FILE) == bytepair.train(lines, 350)
    assert f"{len(lines):,} documents ->" in result.text


def test_train_progress_bar_and_quiet(corpus, tmp_path):
    shown = run_script("train", corpus, "--vocab-size", "300", "-o", tmp_path / "a", "--progress")
    assert shown.returncode == 0 and b"merg" in shown.stderr.lower()
    quiet = run_script("train", corpus, "--vocab-size", "300", "-o", tmp_path / "b")
    assert quiet.returncode == 0 and quiet.stderr == b""  # not a terminal: no bar
    assert b"bytes per token" in quiet.stdout


# -- encode / decode / count --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("docs")
    texts = [CORPUS[:5000], "short one\r\nwith CRLF\r\n", "", "no newline at the end: naïve 🎉", CORPUS * 3]
    paths = []
    for i, text in enumerate(texts):
        path = folder / f"doc{i}.txt"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def test_encode_text_and_json_one_document_per_file(trained, docs):
    tok = files.load_tokenizer(trained)
    want = [tok.encode(p.read_bytes().decode()) for p in docs]
    text = run("encode", "-t", trained, *docs)
    assert text.code == 0, text.err
    assert [[int(i) for i in line.split()] for line in text.text.split("\n")[:-1]] == want
    as_json = run("encode", "-t", trained, "--format", "json", *docs)
    assert [json.loads(line) for line in as_json.text.splitlines()] == want
    # An explicit separator goes after each document in every format.
    sep = run("encode", "-t", trained, "--format", "json", "--separator", "<|endoftext|>", *docs)
    assert [json.loads(line) for line in sep.text.splitlines()] == [w + [0] for w in want]


def test_encode_lines_and_jsonl_documents(trained, tmp_path):
    tok = files.load_tokenizer(trained)
    lines = CORPUS.splitlines()[:50] + ["", "last line without break"]
    (tmp_path / "lines.txt").write_text("\n".join(lines), encoding="utf-8")
    result = run("encode", "-t", trained, "--documents", "line", "--format", "json", tmp_path / "lines.txt")
    assert [json.loads(x) for x in result.text.splitlines()] == [tok.encode(x) for x in lines]
    with gzip.open(tmp_path / "d.jsonl.gz", "wt", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps({"text": line}) + "\n")
    result = run("encode", "-t", trained, "--jsonl-field", "text", "--format", "json", tmp_path / "d.jsonl.gz")
    assert result.code == 0, result.err
    assert [json.loads(x) for x in result.text.splitlines()] == [tok.encode(x) for x in lines]


def test_binary_token_file_reads_with_numpy_memmap(trained, docs, tmp_path):
    import numpy as np

    tok = files.load_tokenizer(trained)
    out = tmp_path / "docs.bin"
    result = run("encode", "-t", trained, "--format", "bin", "--dtype", "uint16", "-o", out, *docs)
    assert result.code == 0, result.err
    assert "<|endoftext|> after each document" in result.err and "uint16" in result.err
    want: list[int] = []
    for p in docs:
        want += tok.encode(p.read_bytes().decode()) + [tok.token_to_id("<|endoftext|>") or 0]
    ids = np.memmap(out, dtype=np.uint16, mode="r")
    assert ids.tolist() == want
    assert np.fromfile(out, dtype="<u2").tolist() == want
    wide = run(
        "encode",
        "-t",
        trained,
        "--format",
        "bin",
        "--dtype",
        "uint32",
        "--separator",
        "none",
        "-o",
        tmp_path / "w.bin",
        docs[0],
    )
    assert wide.code == 0
    assert np.memmap(tmp_path / "w.bin", dtype="<u4", mode="r").tolist() == tok.encode(docs[0].read_text())
    # Decoding the binary file gives the documents back: the separator ends each (joined like text and JSON
    # lines), or with --separator none it is decoded as its text.
    back = run("decode", "-t", trained, "--format", "bin", "--dtype", "uint16", out)
    assert back.code == 0, back.err
    assert back.out == b"\n".join(p.read_bytes() for p in docs)
    joined = run("decode", "-t", trained, "--format", "bin", "--dtype", "uint16", "--join", r"\n--\n", out)
    assert joined.out == b"\n--\n".join(p.read_bytes() for p in docs)
    raw = run("decode", "-t", trained, "--format", "bin", "--dtype", "uint16", "--separator", "none", out)
    assert raw.out == b"".join(p.read_bytes() + b"<|endoftext|>" for p in docs)
    wrong = run("decode", "-t", trained, "--format", "bin", "--dtype", "uint16", "--separator", "<|nope|>", out)
    assert wrong.code != 0 and "not a special token" in wrong.err
    assert run("decode", "-t", trained, "--separator", "<|endoftext|>", stdin=b"1 2\n").code != 0


def test_decode_round_trips_text_and_json(trained, docs, tmp_path):
    for fmt in ("text", "json"):
        encoded = run("encode", "-t", trained, "--format", fmt, *docs)
        (tmp_path / f"ids.{fmt}").write_bytes(encoded.out)
        decoded = run("decode", "-t", trained, "--format", fmt, tmp_path / f"ids.{fmt}")
        assert decoded.code == 0, decoded.err
        assert decoded.out == b"\n".join(p.read_bytes() for p in docs)
        joined = run("decode", "-t", trained, "--format", fmt, "--join", r"\n---\n", stdin=encoded.out)
        assert joined.out == b"\n---\n".join(p.read_bytes() for p in docs)


def test_encode_gpt2_from_stdin_and_count(shared_data):
    data = str(shared_data)
    result = run("encode", "-t", "gpt2", "--data", data, stdin=b"Hello world")
    assert result.text == "15496 995\n"
    decoded = run("decode", "-t", "r50k_base", "--data", data, stdin=b"15496 995\n")
    assert decoded.out == b"Hello world"
    text = (shared_data / "text/tinyshakespeare/input.txt").read_text(encoding="utf-8")
    enc = bytepair.get_encoding("cl100k_base", shared_data)
    counted = run("count", "-t", "cl100k_base", "--data", data, shared_data / "text/tinyshakespeare/input.txt")
    assert counted.text == f"{len(enc.encode(text))}\n"
    both = run(
        "count",
        "-t",
        "cl100k_base",
        "--data",
        data,
        shared_data / "text/tinyshakespeare/input.txt",
        "-",
        stdin=b"two tokens",
    )
    assert both.text.splitlines()[-2:] == ["2\tstandard input", f"{len(enc.encode(text)) + 2}\ttotal"]


def test_special_tokens_in_the_input(trained, tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("one<|endoftext|>two", encoding="utf-8")
    error = run("encode", "-t", trained, path)
    assert error.code == 1 and "--special allow" in error.err and error.err.count("\n") == 1
    tok = files.load_tokenizer(trained)
    allow = run("encode", "-t", trained, "--special", "allow", path)
    assert allow.text.split() == [str(i) for i in tok.encode("one<|endoftext|>two", allowed_special="all")]
    as_text = run("encode", "-t", trained, "--special", "text", path)
    assert as_text.text.split() == [str(i) for i in tok.encode_ordinary("one<|endoftext|>two")]


def test_large_input_streams_in_constant_memory(tmp_path, trained):
    """60 MB in one document: the ids equal encoding it whole, and the process stays far below the memory
    that holding the text and its ids would take (~60 MB of text + ~240 MB of Python ints)."""
    tok = files.load_tokenizer(trained)
    block = CORPUS * 8
    repeat = 60_000_000 // len(block.encode())
    path = tmp_path / "big.txt"
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(repeat):
            f.write(block)
    code = (
        "import sys\n"
        "from bytepair import cli\n"
        f"status = cli.main(['encode', '-t', {str(trained)!r}, '--format', 'bin', '--dtype', 'uint16', '-o', "
        f"{str(tmp_path / 'big.bin')!r}, {str(path)!r}])\n"
        # VmHWM: this process's peak RSS (ru_maxrss would include the parent's, which the fork copied)
        "print(next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM')))\n"
        "sys.exit(status)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    peak_mb = int(done.stdout.split()[-1]) / 1024
    per_block = tok.encode(block)  # the block ends with a line break after a letter: pieces are independent
    assert tok.encode(block * 2) == per_block * 2
    size = (tmp_path / "big.bin").stat().st_size
    assert size == 2 * (len(per_block) * repeat + 1)
    import numpy as np

    ids = np.memmap(tmp_path / "big.bin", dtype="<u2", mode="r")
    assert ids[: len(per_block)].tolist() == per_block and ids[-1] == 0
    assert ids[-1 - len(per_block) : -1].tolist() == per_block
    assert peak_mb < 250, f"peak RSS {peak_mb:.0f} MB"


# -- inspect, viz, compare, explain -------------------------------------------------------------------------


def test_inspect_summary_vocab_and_json(trained):
    tok = files.load_tokenizer(trained)
    summary = run("inspect", trained, "--top", "5")
    assert summary.code == 0, summary.err
    text = summary.text
    assert repr(tok) in text and "<|endoftext|> (0)" in text and "Longest tokens" in text
    (a, b), count = (tok.trace or [])[0]
    assert f'0: "{a.replace("Ġ", " ")}" + "{b.replace("Ġ", " ")}"' in text and str(count) in text
    vocab = run("inspect", trained, "--vocab").text.splitlines()
    assert len(vocab) == tok.vocab_size
    assert vocab[0] == "0\t<|endoftext|>\t(special)"
    assert f'{tok.token_to_id("Ċ")}\t"\\n"' in vocab  # the line break, escaped
    info = json.loads(run("inspect", trained, "--json").out)
    assert info["vocab_size"] == tok.vocab_size and info["merges"] == len(tok.merges)


def test_viz_terminal(trained, corpus):
    tok = files.load_tokenizer(trained)
    text = "The cat sat on the mat, naïve 🎉."
    plain = run("viz", trained, text, "--color", "never")
    first = plain.text.splitlines()[0]
    assert first.split("|") == [tok.decode([i]) for i in tok.encode(text)][:2] + first.split("|")[2:]
    assert first.replace("|", "") == text
    assert f"{len(tok.encode(text))} tokens" in plain.text
    colored = run("viz", trained, text, "--color", "always", "--ids")
    assert "\x1b[" in colored.text and f"[{tok.encode(text)[0]}]" in colored.text
    from_file = run("viz", trained, corpus, "--color", "never", "--max-chars", "40")
    assert "the first 40 of" in from_file.text
    piped = run("viz", trained, stdin=text.encode())
    assert piped.text.splitlines()[0] == first  # not a terminal: no colour


def test_viz_html_page(trained, tmp_path):
    result = run("viz", trained, "A line.\nAnother <|endoftext|> & <b>bold</b>", "--html", tmp_path / "v.html")
    assert result.code == 0 and "wrote" in result.err
    page = (tmp_path / "v.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'class="t special"' in page
    body = page.split('<pre id="text">')[1].split("</pre>")[0]
    assert "<b>" not in body and "&lt;" in body and "&amp;" in body  # the text is escaped
    assert "http" not in page.split("<body>")[1]  # self-contained: nothing loaded from elsewhere


def test_compare_table_json_and_chart(trained, corpus, tmp_path, shared_data):
    result = run(
        "compare",
        "-t",
        f"mine={trained}",
        "-t",
        "gpt2",
        "--data",
        shared_data,
        "--baseline",
        "bytes",
        "--baseline",
        "words",
        corpus,
        "--json",
        "--png",
        tmp_path / "c.png",
    )
    assert result.code == 0, result.err
    rows = {r["name"]: r for r in json.loads(result.out)}
    tok = files.load_tokenizer(trained)
    ids = tok.encode(CORPUS)
    assert rows["mine"]["tokens"] == len(ids) and rows["mine"]["distinct_tokens"] == len(set(ids))
    assert rows["mine"]["bytes_per_token"] == round(len(CORPUS.encode()) / len(ids), 4)
    assert rows["words"]["tokens"] == len(CORPUS.split()) and rows["bytes"]["tokens"] == len(CORPUS.encode())
    assert rows["gpt2"]["tokens"] == len(bytepair.get_encoding("gpt2", shared_data).encode(CORPUS))
    png = (tmp_path / "c.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    table = run("compare", "-t", trained, "--baseline", "chars", corpus)
    assert "bytes/token" in table.text and str(trained).rstrip("/") in table.text


def test_explain_prints_the_textbook_lecture():
    result = run("explain")
    assert result.code == 0
    text = result.text
    assert "(u, g) 20" in text and 'merge it into the new token "ug"' in text
    assert "1. u + g → ug   2. u + n → un   3. h + ug → hug" in text
    own = run("explain", "low:5", "lower:2", "newest:6", "widest:3", "--merges", "2")
    assert "(e, s) 9" in own.text and "Stopped after 2 merges" in own.text
    assert run("explain", "hug:x").code == 2


# -- errors ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["encode", "-t", "{tok}", "missing.txt"], "no such file: 'missing.txt'"),
        (["encode", "-t", "gpt2", "--data", "{tmp}"], "never downloads"),
        (["encode", "-t", "gpt3"], "unknown tokenizer 'gpt3'"),
        (["train", "missing.txt", "--vocab-size", "300", "-o", "x"], "no such file"),
        (["train", "{corpus}", "--vocab-size", "0", "-o", "{tmp}"], "--vocab-size must be a positive number"),
        (["train", "{corpus}", "--vocab-size", "100", "-o", "{tmp}"], "--vocab-size 100 is smaller than the base"),
        (["train", "{corpus}", "--vocab-size", "300", "--pattern", "gpt5", "-o", "{tmp}"], "unknown pattern 'gpt5'"),
        (["encode", "-t", "{tok}", "--format", "text", "--dtype", "uint16"], "--dtype is for --format bin"),
        (["decode", "-t", "{tok}"], "'x' is not a token id"),
        (["decode", "-t", "{tok}", "--format", "bin", "--dtype", "uint32"], "stray byte"),
        (["inspect", "{tmp}"], "holds no tokenizer"),
        (["inspect", "{corpus}"], "is not a tokenizer file"),
        (["compare", "{corpus}"], "nothing to compare"),
        (["encode", "-t", "{tok}", "--threads", "0"], "--threads must be at least 1"),
        (["encode", "-t", "{tok}", "-o", "{tmp}/no/such/dir/x.txt"], "does not exist"),
        (["train", "{corpus}", "--vocab-size", "300", "--reverse-complement", "-o", "{tmp}"], "is a DNA option"),
        (
            ["train", "{corpus}", "--vocab-size", "300", "--alphabet", "ACGTN", "--keep-case", "-o", "{tmp}"],
            "--alphabet, --keep-case are DNA options",
        ),
        (["train", "{corpus}", "--vocab-size", "300", "-o", " "], "-o is empty"),
        (["decode", "{tmp}", "-t", "{tok}"], "is a folder"),
        (["compare", "-t", "=gpt2", "{corpus}"], "the label before '=' is empty"),
        (["encode", "-t", ""], "the tokenizer is empty"),
        (["encode", "-t", "gpt2", "--data", "{tmp}/typo"], "no such folder"),
        (["compare", "-t", "{tok}", "{corpus}", "--json", "--markdown"], "--json and --markdown: choose one"),
        (["inspect", "{tok}", "--json", "--vocab"], "--vocab and --json: choose one"),
    ],
)
def test_errors_are_one_line_and_non_zero(argv, message, trained, corpus, tmp_path):
    argv = [a.format(corpus=corpus, tmp=tmp_path, tok=trained) for a in argv]
    result = run(*argv, stdin=b"1 2 x\n" if argv[0] == "decode" and "bin" not in argv else b"abc")
    assert result.code != 0
    assert message in result.err, result.err
    assert result.err.count("\n") == 1 and "Traceback" not in result.err, result.err
    assert not list(Path(tmp_path).glob("**/*.tmp"))  # no half-written files left behind


def test_uint16_refused_for_large_vocabularies(shared_data, tmp_path):
    result = run(
        "encode",
        "-t",
        "cl100k_base",
        "--data",
        shared_data,
        "--format",
        "bin",
        "--dtype",
        "uint16",
        "-o",
        tmp_path / "x.bin",
        stdin=b"hello",
    )
    assert result.code == 1 and "100277 ids" in result.err and "uint32" in result.err
    assert not (tmp_path / "x.bin").exists()


def test_verbose_shows_the_traceback():
    quiet = run("encode", "-t", "gpt2", "missing.txt")
    loud = run("encode", "-t", "gpt2", "missing.txt", "--verbose")
    assert "Traceback" not in quiet.err and "Traceback" in loud.err
    assert loud.err.rstrip().splitlines()[-1] == quiet.err.strip()
    before_command = run("-v", "encode", "-t", "gpt2", "missing.txt")  # as `bytepair --help` lists it
    assert "Traceback" in before_command.err


def test_bad_arguments_exit_2():
    result = run("encode", "--format", "xml", "-t", "gpt2")
    assert result.code == 2 and "invalid choice" in result.err


# -- the installed command ---------------------------------------------------------------------------------------


def test_console_script_and_python_m(shared_data, tmp_path):
    env = {"BYTEPAIR_DATA": str(shared_data)}
    for module in (False, True):
        done = run_script("encode", "-t", "gpt2", stdin=b"Hello world", module=module, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout == b"15496 995\n"
    helped = run_script("--help")
    assert helped.returncode == 0 and b"examples:" in helped.stdout
    failed = run_script("encode", "-t", "nope", module=True)
    assert failed.returncode == 1 and failed.stderr.count(b"\n") == 1 and b"Traceback" not in failed.stderr


def test_closed_pipe_is_not_an_error(trained, corpus):
    shell = f"{SCRIPT} encode -t {trained} {corpus} {corpus} | head -c 10"
    done = subprocess.run(["bash", "-c", shell], capture_output=True, timeout=120)
    assert len(done.stdout) == 10 and b"Traceback" not in done.stderr and b"Error" not in done.stderr


def test_demo_command(tmp_path):
    result = run("demo", "--vocab-size", "300", "--save", tmp_path / "demo.json")
    assert result.code == 0, result.err
    assert "Trained in" in result.text and "decode(encode(sample)) == sample" in result.text
    assert bytepair.Tokenizer.load(tmp_path / "demo.json").vocab_size == 300
    # Arguments that would fail after the training are refused before it (no "Trained in").
    for argv, message in (
        (["--save", tmp_path], "is a folder"),
        (["--save", tmp_path / "no" / "x.json"], "does not exist"),
        (["--vocab-size", "100"], "at least 257"),
    ):
        result = run("demo", *argv)
        assert result.code == 2 and message in result.err and "Trained in" not in result.text, result.err


def test_an_unknown_character_is_reported_where_it_is_in_the_file(tmp_path):
    """Several pieces encoded in parallel: the error is the first unknown character of the file, every time, at its
    position in the file (not in the piece the file was cut into)."""
    run("train", "-", "--mode", "char", "--vocab-size", "40", "-o", tmp_path / "tok", stdin=b"abc abd\n" * 50)
    line = "abc abd " * 120 + "\n"
    lines = 3000  # ~2.9 M characters: several pieces of 256 K characters
    text = line * 1000 + "ab\u543e" + line * (lines - 1000) + "x"
    (tmp_path / "big.txt").write_text(text, encoding="utf-8")
    for threads in ("1", "2", "2", "2"):
        result = run("count", "-t", tmp_path / "tok", tmp_path / "big.txt", "--threads", threads)
        assert result.code == 1
        assert f"big.txt: character '\u543e' (U+543E) at character {len(line) * 1000 + 2} of the file" in result.err
    (tmp_path / "lines.txt").write_text("abc\nab x\n", encoding="utf-8")
    result = run("encode", "-t", tmp_path / "tok", tmp_path / "lines.txt", "--documents", "line")
    assert "lines.txt, line 2: character 'x' (U+0078) at character 3 of the text" in result.err, result.err


def test_train_says_what_its_tokenizer_cannot_encode_and_leaves_no_stale_files(tmp_path):
    """Char mode with an end-of-word suffix on a file with blank lines: training reads lines, encoding reads the file
    whole, so "\\n\\n" has no symbol. Training still succeeds (the files are written), with one warning that says
    why and what to do; a tokenizer.tiktoken an earlier byte-level training left in the folder is removed."""
    (tmp_path / "t.txt").write_text("hello world\n\n\nhello again\n", encoding="utf-8")
    out = tmp_path / "tok"
    assert run("train", tmp_path / "t.txt", "--vocab-size", "270", "-o", out).code == 0
    assert (out / files.TIKTOKEN_FILE).exists()
    result = run(
        "train", tmp_path / "t.txt", "--mode", "char", "--end-of-word-suffix", "</w>", "--vocab-size", "28", "-o", out
    )
    assert result.code == 0, result.err
    assert "cannot encode its training files read whole" in result.err and "--unk-token" in result.err
    assert "Traceback" not in result.err and "RuntimeWarning" not in result.err
    assert not (out / files.TIKTOKEN_FILE).exists() and f"removed the {files.TIKTOKEN_FILE}" in result.text
    assert files.load_tokenizer(out).settings["end_of_word_suffix"] == "</w>"


def test_train_reports_the_texts_size_and_warnings_in_one_line(tmp_path):
    text = "the cat sat on the mat\n" * 6000
    with gzip.open(tmp_path / "t.txt.gz", "wt", encoding="utf-8") as f:
        f.write(text)
    assert (tmp_path / "t.txt.gz").stat().st_size < 2000  # the size on disk is not the text's
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # this module's mark ignores it
        result = run("train", tmp_path / "t.txt.gz", "--vocab-size", "100000", "-o", tmp_path / "tok")
    assert result.code == 0, result.err
    assert f"training text: {len(text) / 1e6:.1f} MB in 1 file" in result.text, result.text
    (warning,) = [line for line in result.err.splitlines() if "warning" in line]
    assert warning.startswith("bytepair train: warning: the corpus ran out of pairs"), result.err


def test_charts_go_where_the_message_says(trained, corpus, tmp_path):
    pytest.importorskip("matplotlib")
    result = run("compare", "-t", trained, corpus, "--png", tmp_path / "chart")
    assert result.code == 0 and f"wrote {tmp_path / 'chart.png'}" in result.err, result.err
    assert (tmp_path / "chart.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "folder.png").mkdir()
    result = run("compare", "-t", trained, corpus, "--png", tmp_path / "folder.png")
    assert result.code == 2 and "is a folder" in result.err


def test_inspect_top_0_claims_nothing_about_counts(trained):
    result = run("inspect", trained, "--top", "0")
    assert result.code == 0 and "no training counts" not in result.text


def test_viz_says_when_a_file_name_is_shown_as_text_and_refuses_folders_and_non_utf8(trained, tmp_path):
    result = run("viz", trained, "no_such_file.txt", "--color", "never")
    assert result.code == 0 and "16 characters" in result.text
    assert "there is no file 'no_such_file.txt'; showing the argument itself as text" in result.err
    assert "note" not in run("viz", trained, "hello world", "--color", "never").err
    folder = run("viz", trained, tmp_path)
    assert folder.code == 2 and "is a folder" in folder.err
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    latin1 = run("viz", trained, tmp_path / "latin1.txt")
    assert latin1.code == 2 and "is not UTF-8" in latin1.err and "Traceback" not in latin1.err


@pytest.mark.skipif(sys.platform != "linux", reason="file size limit through RLIMIT_FSIZE")
def test_a_failed_write_names_the_file_and_leaves_nothing_half_written(tmp_path, corpus):
    import resource

    def small_files():
        resource.setrlimit(resource.RLIMIT_FSIZE, (4_000, 4_000))  # Python ignores SIGXFSZ: writes fail (EFBIG)

    big = tmp_path / "big.txt"
    big.write_text(CORPUS * 40, encoding="utf-8")
    for argv, name in (
        (["train", corpus, "--vocab-size", "2000", "-o", tmp_path / "tok"], "bytepair.json"),
        (["encode", "-t", "gpt2", "--data", tmp_path, big, "-o", tmp_path / "ids.txt"], "ids.txt"),
    ):
        if argv[0] == "encode":  # a tokenizer that loads without the shared data
            argv[2] = str(tmp_path / "tok0")
            assert run("train", corpus, "--vocab-size", "300", "-o", tmp_path / "tok0").code == 0
        result = subprocess.run(
            [sys.executable, "-m", "bytepair", *map(str, argv)],
            capture_output=True,
            text=True,
            timeout=300,
            preexec_fn=small_files,
        )
        assert result.returncode == 1, result.stderr
        assert "File too large" in result.stderr and name in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert not list(tmp_path.glob("**/*.tmp")), list(tmp_path.glob("**/*.tmp"))


def test_errors_name_the_options_not_the_library_arguments(tmp_path):
    (tmp_path / "a.txt").write_text("abc\n", encoding="utf-8")
    assert run("train", tmp_path / "a.txt", "--mode", "char", "--vocab-size", "6", "-o", tmp_path / "ch").code == 0
    (tmp_path / "b.txt").write_text("abcx\n", encoding="utf-8")
    unknown = run("count", "-t", tmp_path / "ch", tmp_path / "b.txt")
    assert "--unk-token '[UNK]'" in unknown.err and "--initial-alphabet CHARS" in unknown.err, unknown.err
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    latin1 = run("train", tmp_path / "latin1.txt", "--vocab-size", "300", "-o", tmp_path / "x")
    assert "--errors replace" in latin1.err and "errors=" not in latin1.err, latin1.err
    misspelt = run("train", tmp_path / "a.txt", "--vocab-size", "300", "--pattern", "gtp2", "-o", tmp_path / "x")
    assert "none (no split)" in misspelt.err, misspelt.err
