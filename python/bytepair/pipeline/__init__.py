"""Corpora at scale: the same jobs as `bytepair encode` and `bytepair train`, over sharded corpora (text, JSON
lines and parquet files, compressed or not, local or at URLs), run by worker processes on this machine or by
Ray on a cluster, resumable, into the shards pre-training frameworks read.

- `encode_corpus` (`shards`): a corpus into Megatron `.bin` + `.idx` shards or raw id shards, with a manifest;
  resumes after any interruption, byte for byte.
- `count_corpus`, `train_corpus` (`counting`): words counted by workers and merged; a tokenizer trained from
  them with exactly the merges of single-process training.
- `engines`: where tasks run (local processes, Ray); `tasks`: what they run; `worker`: a local worker process.

See docs/scale.md for running on a Ray cluster, and what happens on each kind of failure.
"""

from __future__ import annotations

from .counting import count_corpus, train_corpus
from .shards import EncodeResult, encode_corpus, parse_size

__all__ = ["EncodeResult", "count_corpus", "encode_corpus", "parse_size", "train_corpus"]
