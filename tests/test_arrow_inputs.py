"""HF datasets and pyarrow inputs: `train(ds["text"])`, `train(ds, field="text")`, iterable datasets, pyarrow arrays
and tables, and encoding a column, all read as Arrow a batch at a time (training hands the buffers to the core, no
Python string per row) — with the same results as the same strings in a list. (How fast: bench/hf_datasets.py.)"""

from __future__ import annotations

import pyarrow as pa
import pytest

import bytepair
from bytepair import arrow

datasets = pytest.importorskip("datasets")

TEXTS = [f"line {i}: the cat sat on the mat, naïve café 🎉 {i % 7}\n" for i in range(3000)] + ["", "end"]


@pytest.fixture(scope="module")
def ds():
    return datasets.Dataset.from_dict({"text": TEXTS, "id": list(range(len(TEXTS)))})


@pytest.fixture(scope="module")
def want():
    return bytepair.train(TEXTS, 400)


def test_every_form_of_a_dataset_trains_as_its_strings(ds, want, tmp_path):
    assert bytepair.train(ds["text"], 400) == want
    assert bytepair.train(ds, 400, field="text") == want
    assert bytepair.train(ds, 400) == want  # its only text column
    assert bytepair.train(ds.to_iterable_dataset(num_shards=3), 400, field="text") == want
    assert bytepair.train(ds.to_iterable_dataset()["text"], 400) == want
    ds.save_to_disk(str(tmp_path / "saved"))
    assert bytepair.train(datasets.load_from_disk(str(tmp_path / "saved"))["text"], 400) == want  # memory-mapped
    assert bytepair.train(pa.chunked_array([TEXTS[:10], TEXTS[10:]]), 400) == want
    assert bytepair.train(pa.table({"text": pa.array(TEXTS, pa.large_string())}), 400) == want
    assert bytepair.train(pa.array(TEXTS, pa.string_view()), 400) == want


def test_order_and_selection_are_kept(ds):
    """A shuffled or filtered dataset reads its rows as datasets gives them (through its indices), in order."""
    shuffled = ds.shuffle(seed=3).select(range(1000))
    texts = list(shuffled["text"])  # row by row, as datasets gives them
    assert bytepair.train(shuffled["text"], 300, tie_break="first_seen") == bytepair.train(texts, 300)
    assert arrow.texts(shuffled["text"]) == texts
    picked = ds.filter(lambda row: row["id"] % 3 == 0)
    assert arrow.texts(picked, "text") == [t for i, t in enumerate(TEXTS) if i % 3 == 0]


def test_training_reads_the_buffers_without_a_python_string_per_row(ds, monkeypatch):
    """A column goes to the core as Arrow batches (add_to_counts: the buffers), never through the path that reads
    a corpus item by item."""
    from bytepair import training

    batches = []
    real = arrow.add_to_counts

    def spy(counters, given):
        given = list(given)
        batches.extend(given)
        real(counters, iter(given))

    def item_by_item(*_args, **_kwargs):
        raise AssertionError("the column was read row by row")

    monkeypatch.setattr(arrow, "add_to_counts", spy)
    monkeypatch.setattr(training, "corpus_items", item_by_item)
    bytepair.train(ds["text"], 300)
    assert batches and all(isinstance(b, pa.Array) for b in batches)
    assert sum(len(b) for b in batches) == len(TEXTS)


def test_a_sliced_array_reads_its_own_rows():
    whole = pa.array(["zero ", "one ", "two ", "three "] * 50)
    part = whole.slice(1, 150)  # an offset into the buffers
    assert bytepair.train(part, 265) == bytepair.train(part.to_pylist(), 265)


def test_encoding_a_column_equals_encoding_its_strings(ds, want):
    assert want.encode_batch(ds["text"]) == want.encode_batch(TEXTS)
    packed, lengths = want.encode_batch_packed(ds["text"])
    assert (packed, lengths) == want.encode_batch_packed(TEXTS)
    arrays = want.encode_to_numpy(ds["text"])
    assert [a.tolist() for a in arrays] == want.encode_batch(TEXTS)
    _, rows = want.encode_batch_padded(ds["text"], pad_id=0)
    assert rows.tolist() == [len(x) for x in want.encode_batch(TEXTS)]


def test_what_is_not_text_is_refused_clearly(ds):
    two = datasets.Dataset.from_dict({"title": ["a", "b"], "body": ["x y", "z"]})
    with pytest.raises(TypeError, match=r"several text columns \(\['title', 'body'\]\): name the one to use"):
        bytepair.train(two, 270)
    assert bytepair.train(two, 257, field="body") == bytepair.train(["x y", "z"], 257)
    with pytest.raises(
        ValueError, match=r"field='txt' is not a column of this Dataset: its columns are \['text', 'id'\]"
    ):
        bytepair.train(ds, 300, field="txt")
    with pytest.raises(TypeError, match="holds int64, not text"):
        bytepair.train(ds["id"], 300)
    nulls = datasets.Dataset.from_dict({"text": ["a", None, "b"]})
    with pytest.raises(TypeError, match=r"row 1 of the text column is null"):
        bytepair.train(nulls["text"], 300)
    with pytest.raises(TypeError, match=r"row 1 of the text column is null"):
        bytepair.train(["a b"], 257).encode_batch(nulls["text"])
    transformed = ds.with_transform(lambda batch: {"text": [t.upper() for t in batch["text"]]})
    with pytest.raises(TypeError, match="has a transform"):
        bytepair.train(transformed, 300, field="text")


def test_field_picks_the_text_of_mapping_items():
    rows = [{"text": t, "n": i} for i, t in enumerate(TEXTS[:100])]
    assert bytepair.train(rows, 300, field="text") == bytepair.train(TEXTS[:100], 300)
    with pytest.raises(ValueError, match="corpus item 0 has no field 'body'"):
        bytepair.train(rows, 300, field="body")
    with pytest.raises(TypeError, match="pass field='text'"):
        bytepair.train(rows, 300)
