"""Simulates the cache lines the whole-token table's probes touch on fresh English (a tool for the profile doc).

    .venv/bin/python bench/table_lines.py [ENCODING ...] [--cache-kb 768] [--every-probe]

Splits the benchmark's steady slice of English (`bench/.cache/encode/`, written by `bench/encode.py`) into pieces by
tiktoken's pattern, and replays the table's lookups through a least-recently-used cache of `--cache-kb`: by default
only the lookups of pieces that are tokens of up to 8 bytes (the short table: 16-byte slots, four to a line, each
token placed as `src/encode/whole.rs` places it — its start from its bytes times the same odd constant, linear probing
in id order); with `--every-probe` also the probes of short pieces that are no token (at their start's line) and of
pieces of 9–16 bytes (the medium table: 32-byte slots, two to a line, placed by a random hash here). Each layout is
compared with one packed by id (the most frequent tokens, lowest ids, four to a line). Prints the misses.

A model, not a measurement of the machine: no other data competes for the cache, no prefetcher, no second level.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter, OrderedDict

import regex

from encode import CACHE, tiktoken_encoding

MULTIPLIER = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1


def slots_for(count: int) -> int:
    """As `whole.rs`'s `slots_for`: a power of two, at most 3/4 full."""
    return max(16, 1 << (count * 4 // 3).bit_length())


def short_start(piece: bytes, slots: int) -> int:
    """As `whole.rs`'s `short_start`: the piece's bytes (little-endian, zero-padded) times an odd constant, top bits."""
    shift = 64 - (slots.bit_length() - 1)
    return ((int.from_bytes(piece.ljust(8, b"\0"), "little") * MULTIPLIER) & MASK64) >> shift


def simulate(encoding: str, cache_kb: int, every_probe: bool) -> None:
    enc = tiktoken_encoding(encoding)
    ranks: dict[bytes, int] = enc._mergeable_ranks  # (tiktoken keeps them there)
    short = sorted((r, b) for b, r in ranks.items() if len(b) <= 8)
    slots = slots_for(len(short))
    placed: dict[bytes, int] = {}
    taken: set[int] = set()
    for _, b in short:  # in id order, as the table is filled
        at = short_start(b, slots)
        while at in taken:
            at = (at + 1) & (slots - 1)
        taken.add(at)
        placed[b] = at
    by_id = {b: i for i, (_, b) in enumerate(short)}
    medium = {b for b in ranks if 9 <= len(b) <= 16}
    medium_slots = slots_for(len(medium))
    path = CACHE / "encode" / "english_10+10mb_v3.json"
    if not path.exists():
        sys.exit(f"{path} is missing: run bench/encode.py once (it writes the slices)")
    docs = json.loads(path.read_text(encoding="utf-8"))
    pattern = regex.compile(enc._pat_str)  # (tiktoken's pattern)
    lines_held = cache_kb * 1024 // 64

    def line(piece: bytes, packed: bool) -> tuple[str, int] | None:
        if len(piece) <= 8:
            if piece in placed:
                return ("short", (by_id[piece] if packed else placed[piece]) >> 2)
            return ("short", short_start(piece, slots) >> 2) if every_probe else None
        if len(piece) <= 16 and every_probe:
            digest = int.from_bytes(hashlib.blake2b(piece, digest_size=8).digest(), "little")
            return ("medium", (digest % medium_slots) >> 1)
        return None

    for packed in (False, True):
        cache: OrderedDict[tuple[str, int], None] = OrderedDict()
        probes, misses = 0, Counter[str]()
        for doc in docs:
            for text in pattern.findall(doc):
                piece = text.encode("utf-8")
                at = line(piece, packed)
                if at is None:
                    continue
                probes += 1
                if at in cache:
                    cache.move_to_end(at)
                    continue
                kind = ("token" if piece in placed or piece in medium else "no token") + f" {at[0]}"
                misses[kind] += 1
                cache[at] = None
                if len(cache) > lines_held:
                    cache.popitem(last=False)
        total = sum(misses.values())
        layout = "packed by id" if packed else "as built"
        print(
            f"{encoding}, {layout}: {probes} probes, {total} misses ({100 * total / probes:.2f} %) "
            f"of a {cache_kb} KB cache; {dict(misses)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("encodings", nargs="*", default=["r50k_base", "cl100k_base", "o200k_base"])
    parser.add_argument("--cache-kb", type=int, default=768)
    parser.add_argument("--every-probe", action="store_true", help="also probes of pieces that are no token")
    args = parser.parse_args()
    for encoding in args.encodings:
        simulate(encoding, args.cache_kb, args.every_probe)


if __name__ == "__main__":
    main()
