"""HF `tokenizer.json` files holding a BPE model: read into a bytepair tokenizer with HF's ids, and written
from one so that HF `tokenizers` and `transformers` load it with bytepair's ids. What is supported, and where HF
and bytepair differ, is in the docstrings of `Tokenizer.from_hf` and `Tokenizer.save_hf`.
"""

# mypy: disable-error-code="dict-item, type-arg, no-untyped-def, no-untyped-call, union-attr, arg-type, index, operator, call-overload, return-value, assignment, misc"

from __future__ import annotations

import json
import os
import re

from .. import _core, reference
from .._tokenizer import Tokenizer
from ..writing import write_whole

__all__ = ["dumps", "load", "save"]

PathLike = str | os.PathLike[str]

# HF pre-tokenizers that cut text at whitespace, dropping it, by the bytepair pattern that splits the same way.
_HF_WHITESPACE_SPLIT = r"\S+"
_HF_BERT = r"[^\s\p{P}!-/:-@\[-`{-~]+|[\p{P}!-/:-@\[-`{-~]"  # whitespace dropped, each punctuation mark alone
_HF_WORD_SPLITTERS = {"whitespace": "Whitespace", _HF_WHITESPACE_SPLIT: "WhitespaceSplit", _HF_BERT: "BertPreTokenizer"}


def load(tokenizer_json: PathLike) -> Tokenizer:
    """See `Tokenizer.from_hf`."""
    p = os.fspath(tokenizer_json)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"no such file: {p!r}")
    try:
        with open(p, encoding="utf-8") as f:
            doc = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{p!r} is not a valid tokenizer.json: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{p!r} is not a valid tokenizer.json: it holds a JSON {type(doc).__name__}, not an object")

    def unsupported(what: str, supported: str = "") -> ValueError:
        supported = supported or (
            "bytepair reads BPE tokenizer.json files: byte-level, or char-level with "
            "unk_token, continuing_subword_prefix and end_of_word_suffix"
        )
        return ValueError(f"{p!r}: {what} is not supported ({supported})")

    model = doc.get("model") or {}
    if not isinstance(model, dict) and all(isinstance(v, int) for v in list(doc.values())[:100]):
        raise ValueError(
            f"{p!r} is a vocabulary (token -> id), not a tokenizer.json: for GPT-2's vocab.json "
            f"with merges.txt use Tokenizer.from_gpt2(vocab_json, merges_txt) (the command line: "
            f"-t with the folder that holds both)"
        )
    if not isinstance(model, dict) or model.get("type") != "BPE":
        raise unsupported(f"model type {model.get('type') if isinstance(model, dict) else model!r}")
    pre = doc.get("pre_tokenizer") or {}
    if not isinstance(pre, dict):
        raise ValueError(f"{p!r}: pre_tokenizer must be an object or null, not {pre!r}")
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else ([pre] if pre else [])
    if not all(isinstance(s, dict) for s in steps):
        raise ValueError(f"{p!r}: pre_tokenizer steps must be objects, got {steps!r}")
    if not any(s.get("type") == "ByteLevel" for s in steps):
        return _load_char(p, doc, model, steps, unsupported)
    for key in ("continuing_subword_prefix", "end_of_word_suffix", "unk_token", "dropout"):
        if model.get(key):
            raise unsupported(f"model.{key}={model[key]!r} with a ByteLevel pre-tokenizer")
    normalizer = doc.get("normalizer")
    lowercase = normalizer == {"type": "Lowercase"}
    if normalizer is not None and not lowercase:
        raise unsupported(f"normalizer {normalizer.get('type') if isinstance(normalizer, dict) else normalizer!r}")
    if steps[-1].get("type") != "ByteLevel" or steps[-1].get("add_prefix_space"):
        raise unsupported(f"pre-tokenizer {pre.get('type')!r} (need ByteLevel without add_prefix_space)")
    if len(steps) == 1:
        pattern = "gpt2" if steps[0].get("use_regex", True) else None
    elif steps[-1].get("use_regex", True):
        # HF splits each piece of the steps before again with GPT-2's regex: two splits in a row.
        raise unsupported(
            f"ByteLevel with use_regex=True after {steps[0].get('type')!r} (GPT-2's regex "
            f"inside each piece of the first split)",
            "set use_regex to false, as after a Split it usually is, or use the ByteLevel pre-tokenizer alone",
        )
    elif len(steps) == 2 and steps[0].get("type") == "Split":
        # Which text the split keeps (Isolated keeps what is between matches too) as one of our patterns.
        pattern = _hf_split_pattern(steps[0], unsupported)
    elif len(steps) == 2 and steps[0].get("type") == "Whitespace":
        pattern = "whitespace"
    else:
        raise unsupported(f"pre-tokenizer sequence {[s.get('type') for s in steps]!r}")
    vocab, merges, specials = _hf_vocab_and_merges(p, doc, model)
    _refuse_added_token_options(doc, lowercase, unsupported)
    merges = [" ".join(m) for m in merges]
    core = _core.CoreTokenizer.from_hf_parts(
        p, list(vocab.items()), merges, specials, pattern, lowercase, bool(model.get("ignore_merges"))
    )
    return Tokenizer(core)


def _load_char(p: str, doc: dict, model: dict, steps: list[dict], unsupported) -> Tokenizer:
    """from_hf for char-level BPE (see there)."""
    if model.get("byte_fallback"):
        raise unsupported("model.byte_fallback=True (SentencePiece-style <0x..> byte tokens)")
    if model.get("dropout") not in (None, 0, 0.0):
        raise unsupported(
            f"model.dropout={model.get('dropout')!r} (BPE-dropout is random; bytepair encodes "
            f"deterministically: set it to null)"
        )
    options = {}
    for key in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
        value = model.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{p!r}: model.{key} must be a string or null, not {value!r}")
        options[key] = value or None  # HF treats "" as no marker
    lowercase = _hf_char_lowercase(doc.get("normalizer"), unsupported)
    pattern = _hf_char_pattern(steps, unsupported)
    vocab, merges, specials = _hf_vocab_and_merges(p, doc, model)
    _refuse_added_token_options(doc, lowercase, unsupported)
    core = _core.CoreTokenizer.from_hf_char_parts(
        p,
        list(vocab.items()),
        merges,
        specials,
        options["unk_token"],
        options["continuing_subword_prefix"],
        options["end_of_word_suffix"],
        bool(model.get("fuse_unk")),
        pattern,
        lowercase,
        bool(model.get("ignore_merges")),
    )
    return Tokenizer(core)


def dumps(tok: Tokenizer) -> str:
    """See `Tokenizer.save_hf`."""
    settings = tok.settings
    if settings["mode"] == "char":
        return _dumps_char(tok, settings)
    if settings["continuing_subword_prefix"] or settings["end_of_word_suffix"]:
        raise ValueError(
            "save_hf writes byte-level BPE without word markers or char-level BPE; this tokenizer "
            "is byte-level with continuing_subword_prefix/end_of_word_suffix"
        )
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    pattern = settings["pattern"]
    if pattern == "gpt2":
        pre_tokenizer = {**byte_level, "use_regex": True}
    elif pattern is None:
        pre_tokenizer = byte_level
    elif pattern == "whitespace":  # HF's Whitespace pre-tokenizer is the same \w+|[^\w\s]+, dropping spaces
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, byte_level]}
    else:
        # The pieces are the regex's matches: text between them is dropped, as tiktoken drops it (cl100k and
        # o200k match all of any text). HF's Isolated would keep that text as pieces: its inverted Removed.
        regex = _hf_regex(tok.core.pattern_regex())
        split = {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Removed", "invert": True}
        if pattern in ("cl100k", "o200k"):
            split = {**split, "behavior": "Isolated", "invert": False}
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    model = {
        "type": "BPE",
        "dropout": None,
        "unk_token": None,
        "continuing_subword_prefix": None,
        "end_of_word_suffix": None,
        "fuse_unk": False,
        "byte_fallback": False,
        # tiktoken vocabularies keep a piece that is a token whole, as HF's ignore_merges does.
        "ignore_merges": tok.core.hf_options()[0],
        "vocab": tok.vocab,  # special tokens too, as HF keeps them
        "merges": [list(m) for m in tok.merges],
    }
    return _document(
        tok,
        settings,
        pre_tokenizer,
        model,
        post_processor={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        decoder={"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
    )


def _dumps_char(tok: Tokenizer, settings: dict[str, object]) -> str:
    """save_hf for char-level tokenizers (see there)."""
    pattern = settings["pattern"]
    prefix, suffix = settings["continuing_subword_prefix"], settings["end_of_word_suffix"]
    if pattern is None:
        pre_tokenizer = None
    elif pattern in _HF_WORD_SPLITTERS:
        pre_tokenizer = {"type": _HF_WORD_SPLITTERS[pattern]}
    elif pattern in ("gpt2", "cl100k", "o200k"):  # these match all of the text: Isolated keeps every piece
        regex = _hf_regex(tok.core.pattern_regex())
        pre_tokenizer = {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}
    else:  # the pieces are the matches, text between them is dropped: HF's inverted Removed split
        regex = _hf_regex(tok.core.pattern_regex())
        pre_tokenizer = {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Removed", "invert": True}
    strip_prefix = {"type": "Replace", "pattern": {"Regex": r"\A" + _onig_escape(prefix or "")}, "content": ""}
    strip_suffix = {"type": "Replace", "pattern": {"Regex": _onig_escape(suffix or "") + r"\z"}, "content": ""}
    if pattern in _HF_WORD_SPLITTERS and prefix:  # words start where a token lacks the prefix
        decoders = ([strip_suffix] if suffix else []) + [{"type": "WordPiece", "prefix": prefix, "cleanup": False}]
    elif pattern in _HF_WORD_SPLITTERS and suffix:  # words end at the suffix
        decoders = [{"type": "BPEDecoder", "suffix": suffix}]
    else:  # pieces keep their whitespace: take the markers off and join
        decoders = [strip_prefix] * bool(prefix) + [strip_suffix] * bool(suffix) + [{"type": "Fuse"}]
    ignore_merges, fuse_unk = tok.core.hf_options()
    model = {
        "type": "BPE",
        "dropout": None,
        "unk_token": settings["unk_token"],
        "continuing_subword_prefix": prefix,
        "end_of_word_suffix": suffix,
        "fuse_unk": fuse_unk,
        "byte_fallback": False,
        "ignore_merges": ignore_merges,
        "vocab": tok.vocab,  # unk and special tokens too, as HF keeps them
        "merges": [list(m) for m in tok.merges],
    }
    decoder = decoders[0] if len(decoders) == 1 else {"type": "Sequence", "decoders": decoders}
    return _document(tok, settings, pre_tokenizer, model, post_processor=None, decoder=decoder)


def _document(
    tok: Tokenizer,
    settings: dict[str, object],
    pre_tokenizer: object,
    model: dict[str, object],
    post_processor: object,
    decoder: object,
) -> str:
    specials = [
        {
            "id": tok.token_to_id(t),
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for t in tok.special_tokens
    ]
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": specials,
        "normalizer": {"type": "Lowercase"} if settings["lowercase"] else None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": decoder,
        "model": model,
    }
    return json.dumps(document, ensure_ascii=False)


def _hf_regex(regex: str) -> str:
    """A pattern in the form HF's regex engine reads the same way: Oniguruma takes "{1,3}+" for a repeated
    repetition, not a possessive one; in cl100k/o200k possessiveness changes nothing, so the mark is dropped."""
    return re.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", regex)


def _onig_escape(text: str) -> str:
    """`text` as a literal in a regex (the same in Oniguruma, HF's engine, and fancy-regex, bytepair's)."""
    return "".join("\\" + c if c in "\\^$.|?*+()[]{}" else c for c in text)


def _hf_vocab_and_merges(p: str, doc: dict, model: dict) -> tuple[dict[str, int], list[tuple[str, str]], list[str]]:
    """A tokenizer.json's tokens (model vocab and added tokens) → id, its merges as (left, right), and its added
    tokens, checked so that a damaged file is a ValueError naming the entry."""
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise ValueError(f"{p!r}: model.vocab must be an object of token -> id, not {type(vocab).__name__}")
    out: dict[str, int] = {}
    for token, i in vocab.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 32:
            raise ValueError(f"{p!r}: model.vocab gives {token!r} the id {i!r}; ids are ints from 0 to 2**32 - 1")
        out[token] = i
    raw = model.get("merges", [])
    if not isinstance(raw, list):
        raise ValueError(f"{p!r}: model.merges must be a list, not {type(raw).__name__}")
    merges = []
    for n, m in enumerate(raw):
        parts = m.split(" ") if isinstance(m, str) else m
        if not isinstance(parts, list) or len(parts) != 2 or not all(isinstance(x, str) for x in parts):
            raise ValueError(f'{p!r}: model.merges[{n}] is {m!r}; a merge is [left, right] or "left right"')
        merges.append((parts[0], parts[1]))
    specials: list[str] = []
    added = doc.get("added_tokens") or []
    if not isinstance(added, list):
        raise ValueError(f"{p!r}: added_tokens must be a list, not {type(added).__name__}")
    model_size = len(out)
    for t in added:
        i = t.get("id") if isinstance(t, dict) else None
        if (
            not isinstance(t, dict)
            or not isinstance(t.get("content"), str)
            or not t["content"]
            or isinstance(i, bool)
            or not isinstance(i, int)
            or not 0 <= i < 1 << 32
        ):
            raise ValueError(f'{p!r}: added token {t!r} needs a non-empty "content" and an int "id"')
        if t["content"] in specials:
            continue
        if t["content"] not in out:
            # HF gives an added token that is not in the model the next id after the model's tokens and the
            # added tokens before it, whatever "id" the file says (files HF writes agree).
            top = max((out[s] for s in specials), default=None)
            out[t["content"]] = top + 1 if top is not None and (top >= model_size or model_size == 0) else model_size
        specials.append(t["content"])
    return out, merges, specials


def _hf_char_lowercase(normalizer: object, unsupported) -> bool:
    """Whether a char-level tokenizer.json's normaliser is Lowercase (else none); any other raises."""
    if normalizer is None:
        return False
    parts = (
        normalizer.get("normalizers")
        if isinstance(normalizer, dict) and normalizer.get("type") == "Sequence"
        else [normalizer]
    )
    types = [n.get("type") if isinstance(n, dict) else n for n in parts or []]
    other = [t for t in types if t != "Lowercase"]
    if other:
        hint = " (CharBPETokenizer adds it unless bert_normalizer=False)" if other[0] == "BertNormalizer" else ""
        raise unsupported(f"normalizer {other[0]!r}{hint}", "bytepair supports no normaliser or Lowercase")
    return bool(types)


def _hf_char_pattern(steps: list[dict], unsupported) -> str | None:
    """The bytepair pattern that splits text as a char-level tokenizer.json's pre-tokenizer does."""
    supported = (
        "for char-level BPE bytepair supports no pre-tokenizer, Whitespace, WhitespaceSplit, "
        "BertPreTokenizer, or Split with a regex (behavior Isolated, or Removed)"
    )
    if not steps:
        return None
    if len(steps) > 1:
        raise unsupported(f"pre-tokenizer sequence {[s.get('type') for s in steps]!r}", supported)
    step = steps[0]
    kind = step.get("type")
    by_type = {hf: ours for ours, hf in _HF_WORD_SPLITTERS.items()}
    if not isinstance(kind, str):
        raise unsupported(f"pre-tokenizer type {kind!r}", supported)
    if kind in by_type:
        return by_type[kind]
    if kind != "Split":
        raise unsupported(f"pre-tokenizer {kind!r}", supported)
    return _hf_split_pattern(step, unsupported, supported)


def _hf_split_pattern(step: dict, unsupported, supported: str = "") -> str:
    """The bytepair pattern (whose matches are the pieces, the rest dropped) that splits text as a HF Split
    pre-tokenizer step does."""
    pattern = step.get("pattern")
    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str) and pattern["Regex"]:
        regex = pattern["Regex"]
    elif isinstance(pattern, dict) and isinstance(pattern.get("String"), str) and pattern["String"]:
        regex = _onig_escape(pattern["String"])
    else:
        raise unsupported(f"Split pattern {pattern!r}", supported)
    # Our own export drops "{1,3}+"'s possessive mark (see save_hf); both forms name the pattern.
    named = {
        form: name
        for name in ("gpt2", "cl100k", "o200k", "whitespace")
        for form in (reference.PATTERNS[name], _hf_regex(reference.PATTERNS[name]))
    }
    gaps = rf"(?:(?!(?:{regex}))[\s\S])+"  # a run of text where the regex does not match
    behavior, invert = step.get("behavior"), bool(step.get("invert"))
    if behavior == "Removed" and invert:  # the pieces are the matches, as in bytepair
        return named.get(regex, regex)
    if behavior == "Isolated":  # the pieces are the matches and the text between them
        if named.get(regex) in ("gpt2", "cl100k", "o200k"):  # these match all of any text
            return named[regex]
        return f"(?:{regex})|{gaps}"
    if behavior == "Removed":  # the pieces are the text between matches
        return gaps
    raise unsupported(f"Split behavior {behavior!r}", supported)


def _refuse_added_token_options(doc: dict, lowercase: bool, unsupported) -> None:
    """from_hf: added tokens are matched as they are written, where they are; HF's options that change where or
    how they match (eating spaces beside them, whole words only, matching in the lowercased text) are refused
    rather than ignored, which gave other ids than HF (RoBERTa's "<mask>" has lstrip=True)."""
    for t in doc.get("added_tokens") or []:
        for flag in ("lstrip", "rstrip", "single_word"):
            if t.get(flag):
                raise unsupported(f"added token {t['content']!r} with {flag}=True")
        if lowercase and t.get("normalized"):  # HF would look for it in the lowercased text
            raise unsupported(f"added token {t['content']!r} with normalized=True under Lowercase")


def save(tok: Tokenizer, path: PathLike) -> None:
    """Writes `tok` as a HF tokenizer.json (see `Tokenizer.save_hf`), whole or not at all."""
    write_whole(path, dumps(tok), "utf-8")
