"""The package's layout holds: `__init__` only re-exports, no module reaches for another's private names, the
import paths users had keep working, and tokenizers pickled by earlier versions still load."""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import subprocess
import sys
from pathlib import Path

import bytepair
from conftest import REPO

PACKAGE = REPO / "python" / "bytepair"
MODULES = sorted(p for p in PACKAGE.rglob("*.py"))


def private_module_names() -> set[str]:
    """Private modules of the package (importing those is fine: `_core`, `_tokenizer`, ...)."""
    names = {p.stem for p in PACKAGE.rglob("_*.py") if not p.stem.startswith("__")}
    return names | {p.name.split(".")[0] for p in PACKAGE.glob("_core*")}


def defined_private_names(tree: ast.Module) -> set[str]:
    """Private names a module defines: functions, classes, assignments and `self._x` attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_module_uses_another_modules_private_names():
    private_modules = private_module_names()
    found = []
    for path in MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = defined_private_names(tree)
        where = path.relative_to(PACKAGE)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("bytepair")):
                for alias in node.names:
                    name = alias.name
                    if name.startswith("_") and not name.startswith("__") and name not in private_modules:
                        found.append(f"{where}:{node.lineno} imports {name}")
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                if node.attr in own or node.attr in private_modules:
                    continue
                if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                    continue
                found.append(f"{where}:{node.lineno} uses .{node.attr}")
    assert not found, "\n".join(found)


def test_the_package_init_only_re_exports():
    source = (PACKAGE / "__init__.py").read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 150
    tree = ast.parse(source)
    allowed = (ast.Import, ast.ImportFrom, ast.Expr, ast.Assign, ast.Try)  # docstring, __all__, lazy_exports
    typed: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports only: what type checkers see
            assert isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING" and not node.orelse
            assert all(isinstance(inner, (ast.ImportFrom, ast.AnnAssign)) for inner in node.body)
            typed |= {
                alias.asname or alias.name
                for inner in node.body
                if isinstance(inner, ast.ImportFrom)
                for alias in inner.names
            }
        else:
            assert isinstance(node, allowed), ast.dump(node)[:80]
    assert not any(isinstance(node, (ast.FunctionDef, ast.ClassDef)) for node in ast.walk(tree))
    assert sorted(bytepair.__all__) == sorted(set(bytepair.__all__))
    assert typed == set(bytepair.__all__) - {"__version__"}  # type checkers see every re-export
    for name in bytepair.__all__:
        assert hasattr(bytepair, name), name


def test_importing_the_package_imports_none_of_its_modules():
    """Each re-export is imported on first use: a process that only encodes never loads the trainer or the
    pipeline, and `import bytepair` stays cheap for the command line and the engines' workers."""
    code = (
        "import sys, bytepair; print(sorted(m for m in sys.modules if m.startswith('bytepair.')));"
        "bytepair.get_encoding; print('bytepair.training' in sys.modules, 'bytepair.pipeline' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split("\n")[:2] == ["['bytepair._lazy']", "False False"]


def test_every_module_imports_and_has_a_docstring():
    for info in pkgutil.walk_packages(bytepair.__path__, "bytepair."):
        module = importlib.import_module(info.name)
        assert module.__doc__ and module.__doc__.strip(), info.name


def test_the_import_paths_users_had_keep_working():
    from bytepair import cli, compare, describe, dna, explain, files, reference, viewer, viz

    assert bytepair.Tokenizer.__module__ == "bytepair"
    for name in (
        "Tokenizer",
        "train",
        "train_from_counts",
        "get_encoding",
        "ENCODINGS",
        "train_dna",
        "read_fasta",
        "iter_fasta",
        "FastaRecord",
        "reverse_complement",
        "dna_stats",
        "DnaStats",
        "__version__",
    ):
        assert hasattr(bytepair, name), name
    for name in (
        "OUR_FILE",
        "HF_FILE",
        "TIKTOKEN_FILE",
        "load_tokenizer",
        "documents",
        "Piece",
        "encode_stream",
        "decode_stream",
        "EncodeSummary",
        "Progress",
        "choose_dtype",
        "can_cut",
        "read_ids",
        "open_text",
    ):
        assert hasattr(files, name), name
    for name in ("FastaRecord", "iter_fasta", "read_fasta", "train_dna", "dna_stats", "reverse_complement"):
        assert hasattr(dna, name), name
    assert callable(cli.main) and callable(viz.token_length_histogram) and callable(explain.explain)
    assert callable(compare.compare) and callable(describe.describe) and callable(viewer.terminal)
    assert "gpt2" in reference.PATTERNS


def test_a_tokenizer_pickled_by_version_0_1_0_loads():
    """tests/data/tokenizer-0.1.0.pickle: pickled by bytepair 0.1.0 (all in `bytepair/__init__.py` then), of
    `train(['low lower lowest, hug pug <|endoftext|> hugs'] * 5, vocab_size=270, special_tokens=['<|endoftext|>'])`."""
    data = (Path(__file__).parent / "data" / "tokenizer-0.1.0.pickle").read_bytes()
    assert b"bytepair" in data and b"Tokenizer" in data
    tok = pickle.loads(data)
    assert isinstance(tok, bytepair.Tokenizer)
    assert tok.encode("lowest hugs<|endoftext|>", allowed_special="all") == [258, 69, 83, 84, 269, 0]
    again = bytepair.train(
        ["low lower lowest, hug pug <|endoftext|> hugs"] * 5, vocab_size=270, special_tokens=["<|endoftext|>"]
    )
    assert tok == again
    assert pickle.loads(pickle.dumps(again)) == again
    assert b"bytepair._tokenizer" not in pickle.dumps(again)  # pickles name bytepair.Tokenizer
