"""Every index the kernels follow is checked where arrays enter (load, mmap load, train after a
user's assignment), every parameter against its C type, and the bundle reader refuses zip
bombs: each case is built here and its refusal checked (ValueError naming the file, the
array or the parameter)."""

import json
import os
import re
import struct
import subprocess
import sys
import textwrap
import time
import zipfile
import zlib

import numpy as np
import pytest

from hsw2v import Word2Vec
from hsw2v.layer import HierarchicalSoftmax
from hsw2v.persist import load_bundle, save_bundle


@pytest.fixture(scope="module")
def sentences():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    return [[str(t) for t in rng.choice(words, 20)] for _ in range(2000)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory, sentences):
    path = tmp_path_factory.mktemp("v") / "m.hsw2v"
    Word2Vec(sentences[:300], vector_size=8, min_count=1, workers=1, epochs=1, sg=1).save(path)
    return path


def crafted(saved, tmp_path, edit_arrays=None, edit_meta=None, name="evil.hsw2v"):
    """A copy of `saved` with arrays or parameters changed and valid checksums."""
    meta, arrays = load_bundle(saved)
    arrays = {k: np.array(v) for k, v in arrays.items()}
    if edit_arrays:
        arrays = edit_arrays(arrays) or arrays
    if edit_meta:
        edit_meta(meta)
    path = tmp_path / name
    save_bundle(path, "Word2Vec", meta, arrays)
    return path


# ---------------------------------------------------------------- issue item 2
CRASH_SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    from hsw2v import Word2Vec
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    S = [[str(t) for t in rng.choice(words, 20)] for _ in range(2000)]
    m = Word2Vec(S, vector_size=16, min_count=1, workers=1, epochs=1, sg=1)
    n = len(m.wv)
    # Counts scattered so that the private hot rows are not the highest ids (a slot table of
    # n - 1 entries), and one path naming inner node n - 1: inside syn1's n rows, one past
    # the table.
    m.wv.expandos["count"] = rng.permutation(np.asarray(m.wv.expandos["count"]))
    w = int(np.argmax(m.tree.lengths))
    m.tree.points[w, m.tree.lengths[w] - 1] = n - 1
    try:
        m.save(sys.argv[1])  # save() refuses what load() would refuse...
    except ValueError as exc:
        print("save refused:", exc)
    import hsw2v.word2vec._schema as schema
    schema.refuse_unloadable = lambda *args: None  # ...so write it as a hostile writer would
    m.save(sys.argv[1])
    try:
        m2 = Word2Vec.load(sys.argv[1])
    except ValueError as exc:
        print("refused:", exc)
        sys.exit(0)
    m2.workers = 2
    for _ in range(8):
        m2.train(S, total_examples=len(S), epochs=3)
    print("trained")
    """
)


def test_a_path_naming_inner_node_n_minus_1_is_refused_at_load(tmp_path):
    """Node ids < n passed the old check, but the private hot-row slot table has n - 1
    entries: training with two workers read past it and crashed (in a subprocess here)."""
    path = tmp_path / "node-n-minus-1.hsw2v"
    run = subprocess.run(
        [sys.executable, "-c", CRASH_SCRIPT, str(path)], capture_output=True, text=True
    )
    assert run.returncode >= 0, f"killed by signal {-run.returncode}: {run.stderr[-2000:]}"
    assert run.returncode == 0, run.stderr[-2000:]
    assert "refused:" in run.stdout and "node-n-minus-1.hsw2v" in run.stdout
    assert "inner-node ids must be in [0, 298] for 300 leaves" in run.stdout
    assert "save refused:" in run.stdout and "would refuse" in run.stdout


def set_item(name, index, value):
    def edit(arrays):
        arrays[name][index] = value

    return edit


def replace(name, make):
    def edit(arrays):
        arrays[name] = make(arrays[name])

    return edit


MALFORMED = [
    # the tree: ids, lengths, bits, shapes, dtypes
    ("points", set_item("points", (0, 0), 299), r"array 'points'\[0, 0\] is 299: inner-node"),
    ("points", set_item("points", (5, 0), -1), r"array 'points'\[5, 0\] is -1"),
    ("points", set_item("points", (3, 0), 2**31 - 1), "inner-node ids must be in"),
    ("lengths", set_item("lengths", 2, -1), r"array 'lengths'\[2\] is -1: path lengths"),
    ("lengths", set_item("lengths", 2, 10**6), "path lengths must be in"),
    ("codes", set_item("codes", (1, 0), 2), r"array 'codes'\[1, 0\] is 2: codes must be bits"),
    ("codes", replace("codes", lambda a: a[:, :-1].copy()), "must have the same shape"),
    ("points", replace("points", lambda a: a.astype(np.int64)), "'points' must be a C-contig"),
    ("points", replace("points", lambda a: a[:-1].copy()), "'points' must be a C-contiguous"),
    ("lengths", replace("lengths", lambda a: a.astype(np.uint8)), "'lengths' must be"),
    # weights and per-word arrays
    ("vectors", replace("vectors", lambda a: a[:, :-1].copy()), "'vectors' must be"),
    ("vectors", replace("vectors", lambda a: a.astype(np.float64)), "'vectors' must be"),
    ("syn1", replace("syn1", lambda a: a[:-2].copy()), "'syn1' must be"),
    ("sample_int", replace("sample_int", lambda a: a[:-1].copy()), "'sample_int' must be"),
    ("count", replace("count", lambda a: a.astype(np.int32)), "'count' must be"),
]


@pytest.mark.parametrize("field,edit,pattern", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_each_malformed_array_is_refused_with_and_without_mmap(
    saved, tmp_path, field, edit, pattern
):
    path = crafted(saved, tmp_path, edit_arrays=edit)
    for mmap in (None, "r", "c"):
        with pytest.raises(ValueError, match=f"evil.hsw2v.*{pattern}"):
            Word2Vec.load(path, mmap=mmap)


BAD_PARAMS = [
    ("alpha", 0, r"alpha must be a finite number in \(0, "),
    ("alpha", -0.5, "alpha must be"),
    ("alpha", 1e300, "alpha must be"),  # finite in float64, infinite as the kernels' float
    ("window", 2**40, r"window must be an integer in \[1, 2147483647\], got 1099511627776"),
    ("seed", -1, r"seed must be an integer in \[0, 18446744073709551615\], got -1"),
    ("seed", 2**70, "seed must be"),
    ("negative", 2**31, "negative must be"),
    ("vector_size", 2**40, "vector_size must be"),
    ("sg", 2, "sg must be 0 or 1"),
    ("sample", -1, "sample must be"),
    ("min_alpha", 1.0, r"min_alpha must be in \[0, alpha\]"),
    ("batch_words", 0, "batch_words must be"),
    ("epochs", 2**40, "epochs must be"),
    ("corpus_count", -3, "corpus_count must be"),
    ("kernel", "fast", "kernel must be one of"),
    ("ns_exponent", "x", "ns_exponent must be"),
]


@pytest.mark.parametrize("name,value,pattern", BAD_PARAMS, ids=[p[0] for p in BAD_PARAMS])
def test_model_files_with_out_of_range_parameters_are_refused_at_load(
    saved, tmp_path, name, value, pattern
):
    path = crafted(saved, tmp_path, edit_meta=lambda meta: meta.__setitem__(name, value))
    for mmap in (None, "r"):
        with pytest.raises(ValueError, match=f"evil.hsw2v.*{pattern}"):
            Word2Vec.load(path, mmap=mmap)


# ---------------------------------------------------------------- issue item 5, construction
CONSTRUCTOR_CASES = [
    ({"window": 2**31}, r"window must be an integer in \[1, 2147483647\], got 2147483648"),
    ({"negative": 2**31}, r"negative must be an integer in \[0, 2147483646\]"),
    ({"seed": 2**70}, r"seed must be an integer in \[0, 18446744073709551615\]"),
    ({"seed": -1}, "seed must be"),
    ({"vector_size": 2**40}, r"vector_size must be an integer in \[1, 16777216\]"),
    ({"alpha": float("inf")}, r"alpha must be a finite number in \(0, .*got inf"),
    ({"alpha": float("nan")}, "alpha must be a finite number .*got nan"),
    ({"min_alpha": float("nan")}, "min_alpha must be a finite number"),
    ({"sample": float("nan")}, "sample must be a finite number"),
    ({"sample": float("inf")}, "sample must be a finite number"),
    ({"ns_exponent": float("nan")}, "ns_exponent must be a finite number"),
    ({"ns_exponent": float("-inf")}, "ns_exponent must be a finite number"),
    ({"batch_words": 2**31}, "batch_words must be"),
    ({"epochs": 2**31}, "epochs must be"),
    ({"workers": 2**31}, "workers must be"),
    ({"workers": 1025}, r"workers must be an integer in \[1, 1024\]"),
    ({"min_count": 2**63}, "min_count must be"),
    ({"max_vocab_size": 0}, "max_vocab_size must be None or an integer"),
    ({"max_final_vocab": 2.5}, "max_final_vocab must be None or an integer"),
    ({"cache_words": -1}, "cache_words must be"),
    ({"null_word": 2}, "null_word must be 0 or 1"),
    ({"sorted_vocab": 7}, "sorted_vocab must be 0 or 1"),
    ({"hs": 0, "negative": 0}, "either 'hs' or 'negative'"),
]


@pytest.mark.parametrize("kwargs,pattern", CONSTRUCTOR_CASES)
def test_every_numeric_parameter_is_checked_at_construction(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        Word2Vec([["a", "b"]] * 3, **{"min_count": 1, "workers": 1, **kwargs})


def run_cases(setup: str, cases: list[str]) -> list[str]:
    """Run `setup`, then each case (statements ending in ``train(...)``) on a fresh copy of
    its ``base`` model, in one subprocess: on the old code some of these crashed the process.
    Returns one line per case: ``ValueError: message``, ``trained``, or what else happened."""
    script = textwrap.dedent(setup) + textwrap.dedent(
        """
        import copy
        for case in CASES:
            model = copy.deepcopy(base)
            print("case:", case, flush=True)
            try:
                exec(case)
                print("result: trained", flush=True)
            except Exception as exc:
                print(f"result: {type(exc).__name__}: {exc}", flush=True)
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", f"CASES = {cases!r}\n" + script], capture_output=True, text=True
    )
    last = [line for line in run.stdout.splitlines() if line.startswith("case:")][-1:]
    assert run.returncode >= 0, f"killed by signal {-run.returncode} in {last}"
    assert run.returncode == 0, run.stderr[-2000:]
    return [line[len("result: ") :] for line in run.stdout.splitlines() if line.startswith("result")]


SETUP = """
import numpy as np
from hsw2v import Word2Vec
rng = np.random.default_rng(0)
words = [f"w{i}" for i in range(300)]
S = [[str(t) for t in rng.choice(words, 20)] for _ in range(400)]
base = Word2Vec(vector_size=8, min_count=1, workers=1, epochs=1, hs=1, negative=NEGATIVE)
base.build_vocab(S)
"""
TRAIN = "; model.train(S[:50], total_examples=50, epochs=1)"


def test_parameters_assigned_after_construction_are_checked_before_training():
    cases = [
        ("model.window = 2**31", "window must be"),
        ("model.negative = -1", "negative must be"),
        ("model.alpha = float('inf')", "alpha must be"),
        ("model.seed = 2**64", "seed must be"),
        ("model.sg = 3", "sg must be"),
    ]
    nan_start = "model.train(S, total_examples=9, epochs=1, start_alpha=float('nan'))"
    results = run_cases(
        SETUP.replace("NEGATIVE", "0"),
        [code + TRAIN for code, _ in cases] + [nan_start, "pass" + TRAIN],
    )
    for (code, pattern), result in zip(cases, results, strict=False):
        assert result.startswith("ValueError:") and pattern in result, (code, result)
    assert results[-2].startswith("ValueError: alpha must be"), results[-2]
    assert results[-1] == "trained"


# A user replaces an array, then trains: the old code crashed on several of these.
ASSIGNMENTS = [
    ("model.wv.vectors = np.zeros((301, 8), np.float32)", r"model.wv.vectors must be"),
    ("model.wv.vectors = np.zeros((300, 8), np.float64)", r"model.wv.vectors must be"),
    ("model.wv.vectors = model.wv.vectors[:, ::2]", r"model.wv.vectors must be"),
    ("model.syn1 = np.zeros((295, 8), np.float32)", r"model.syn1 must be"),
    ("model.tree.points = model.tree.points + 1", r"model.tree.points\[.*\] is"),
    ("model.tree.lengths = model.tree.lengths + 40", r"model.tree.lengths"),
    ("model.tree.codes = model.tree.codes.astype(np.int64)", r"model.tree.codes"),
    ("model.wv.key_to_index['w1'] = 10**6", "key_to_index maps a word outside"),
    (
        "model.wv.expandos['sample_int'] = np.zeros(3, np.uint32)",
        r"model.wv.expandos\['sample_int'\]",
    ),
]


def test_arrays_a_user_replaces_are_checked_before_training():
    results = run_cases(SETUP.replace("NEGATIVE", "0"), [code + TRAIN for code, _ in ASSIGNMENTS])
    for (code, pattern), result in zip(ASSIGNMENTS, results, strict=True):
        assert result.startswith("ValueError:") and re.search(pattern, result), (code, result)


def test_scoring_checks_the_tree_it_follows():
    results = run_cases(
        SETUP.replace("NEGATIVE", "0"),
        ["model.tree.points = model.tree.points + 3; model.score([S[0]], total_sentences=1)"],
    )
    assert results == [
        "ValueError: model.tree.points[0, 0] is 301: inner-node ids must be in [0, 298] for "
        "300 leaves"
    ]


def test_negative_sampling_arrays_are_checked():
    cases = [
        ("model.cum_table = model.cum_table[::-1].copy()", "model.cum_table must be non-decr"),
        ("model.syn1neg = np.zeros((3, 8), np.float32)", "model.syn1neg must be"),
        ("model.cum_table = model.cum_table.astype(np.int64)", "model.cum_table must be a uint32"),
    ]
    results = run_cases(SETUP.replace("NEGATIVE", "3"), [code + TRAIN for code, _ in cases])
    for (code, pattern), result in zip(cases, results, strict=True):
        assert result.startswith("ValueError:") and pattern in result, (code, result)


def test_a_read_only_mapped_model_says_how_to_train_it(saved, sentences):
    model = Word2Vec.load(saved, mmap="r")
    with pytest.raises(ValueError, match="read-only .*mmap=None or mmap='c'"):
        model.train(sentences[:10], total_examples=10, epochs=1)
    model = Word2Vec.load(saved, mmap="c")
    model.train(sentences[:10], total_examples=10, epochs=1)


# ---------------------------------------------------------------- mmap shapes
def npy_header(shape) -> bytes:
    text = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {tuple(shape)!r}, }}".encode()
    pad = -(10 + len(text) + 1) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text


@pytest.mark.parametrize(
    "shape", [[-1, 8], [8, -8], [2**62, 2**62], [2**31, 2**33], [2**40, 8]], ids=str
)
def test_negative_or_overflowing_shapes_give_the_same_error_with_and_without_mmap(
    saved, tmp_path, shape
):
    with zipfile.ZipFile(saved) as zf:
        members = {info.filename: zf.read(info.filename) for info in zf.infolist()}
    doc = json.loads(members["meta.json"])
    doc["arrays"]["vectors"]["shape"] = shape
    members["meta.json"] = json.dumps(doc).encode()
    members["vectors.npy"] = npy_header(shape)
    path = tmp_path / "shape.hsw2v"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    messages = set()
    for mmap in (None, "r", "c"):
        with pytest.raises(ValueError, match="shape.hsw2v' is truncated or corrupted") as info:
            Word2Vec.load(path, mmap=mmap)
        messages.add(str(info.value))
    assert len(messages) == 1, messages


# ---------------------------------------------------------------- issue item 4: zip bomb
def write_bomb(path, inflated_mib: int) -> None:
    """A zip whose meta.json deflates `inflated_mib` MiB of spaces into about a thousandth of
    that: one fully flushed deflate block of 1 MiB of spaces, repeated (each starts afresh)."""
    chunk = b" " * (1 << 20)
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = z.compress(chunk) + z.flush(zlib.Z_FULL_FLUSH)
    end = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)  # an empty final block
    crc = 0
    for _ in range(inflated_mib):
        crc = zlib.crc32(chunk, crc)
    size, csize = inflated_mib << 20, len(block) * inflated_mib + len(end)
    name = b"meta.json"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 8, 0, 0, crc, csize, size, len(name), 0)
    with open(path, "wb") as fh:
        fh.write(local + name)
        for _ in range(inflated_mib):
            fh.write(block)
        fh.write(end)
        directory = fh.tell()
        central = struct.pack(
            "<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 8, 0, 0, crc, csize, size, len(name),
            0, 0, 0, 0, 0, 0,
        )  # fmt: skip
        fh.write(central + name)
        fh.write(
            struct.pack(
                "<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, len(central) + len(name), directory, 0
            )
        )


BOMB_SCRIPT = textwrap.dedent(
    """
    import resource, sys, time
    from hsw2v import Word2Vec
    started = time.perf_counter()
    try:
        Word2Vec.load(sys.argv[1])
    except ValueError as exc:
        print("refused:", exc)
    print("seconds:", time.perf_counter() - started)
    # This process's own peak: VmHWM belongs to the address space made at exec, while
    # ru_maxrss also keeps the peak of the process it was forked from (Linux carries it
    # across execve), which is the test runner's size after a long run.
    try:
        with open("/proc/self/status") as fh:
            peak = next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("maxrss_kib:", peak)
    """
)


def test_a_zip_bomb_in_meta_json_is_refused_quickly_with_bounded_memory(tmp_path):
    bomb = tmp_path / "bomb.hsw2v"
    write_bomb(bomb, inflated_mib=2048)  # 2 GiB of spaces
    assert os.path.getsize(bomb) < 4 << 20
    with zipfile.ZipFile(bomb) as zf:  # a well-formed zip: zipfile itself would inflate it
        assert zf.getinfo("meta.json").file_size == 2 << 30
    run = subprocess.run(
        [sys.executable, "-c", BOMB_SCRIPT, str(bomb)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    out = dict(line.split(": ", 1) for line in run.stdout.splitlines())
    assert "bomb.hsw2v" in out["refused"] and "zip bomb" in out["refused"], out
    # Inflating it took 22 s and 4.2 GB before; refusing it reads nothing (the machine may
    # be busy: the bound on time is loose, the one on memory is not).
    assert float(out["seconds"]) < 5.0, out
    assert int(out["maxrss_kib"]) < 400_000, out


def test_meta_json_is_read_with_a_limit_whatever_its_header_declares(tmp_path, monkeypatch):
    """A stored (uncompressed) meta.json above the cap is refused from its declared size;
    one whose header understates its size is cut at the declared size and then fails its
    checksum, never read whole."""
    from hsw2v import persist

    monkeypatch.setattr(persist, "_META_MAX_BYTES", 1000)
    big = tmp_path / "big.hsw2v"
    with zipfile.ZipFile(big, "w") as zf:
        zf.writestr("meta.json", b" " * 5000)
    with pytest.raises(ValueError, match="big.hsw2v.*meta.json is larger than 1000 bytes"):
        load_bundle(big)
    data = bytearray(big.read_bytes())
    # understate the size in both headers (local at 0, central after the data)
    for at in (18, data.rindex(b"PK\x01\x02") + 20):
        data[at : at + 8] = struct.pack("<2L", 10, 10)
    liar = tmp_path / "liar.hsw2v"
    liar.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="liar.hsw2v.*truncated or corrupted"):
        load_bundle(liar)


# ---------------------------------------------------------------- HierarchicalSoftmax files
@pytest.mark.parametrize(
    "edit,pattern",
    [
        (lambda m: m.__setitem__("seed", "x"), "seed must be an integer"),
        (lambda m: m.__setitem__("seed", 2**70), "seed must be an integer"),
        (lambda m: m.__setitem__("seed", -1), "seed must be an integer"),
        (lambda m: m.__setitem__("history", 5), "history must be a list of numbers"),
        (lambda m: m.__setitem__("history", ["a"]), "history must be a list of numbers"),
        (lambda m: m.__setitem__("history", [None]), "history must be a list of numbers"),
        (lambda m: m.__setitem__("dim", 2**40), "dim=1099511627776"),
        (lambda m: m.__setitem__("n_classes", True), "n_classes=True"),
        (lambda m: m.clear() or m.update({"x": 1}), "dim=None"),
    ],
)
def test_layer_files_with_bad_metadata_give_value_error_naming_the_file(tmp_path, edit, pattern):
    layer = HierarchicalSoftmax.from_counts([5, 3, 2, 1], dim=3)
    path = tmp_path / "layer.hsw2v"
    layer.save(path)
    meta, arrays = load_bundle(path)
    edit(meta)
    save_bundle(path, "HierarchicalSoftmax", meta, arrays)
    with pytest.raises(ValueError, match=f"layer.hsw2v.*{pattern}"):
        HierarchicalSoftmax.load(path)


def test_layer_metadata_that_is_not_an_object_is_refused(tmp_path):
    layer = HierarchicalSoftmax.from_counts([5, 3, 2, 1], dim=3)
    path = tmp_path / "layer.hsw2v"
    layer.save(path)
    _, arrays = load_bundle(path)
    save_bundle(path, "HierarchicalSoftmax", [1, 2], arrays)
    with pytest.raises(ValueError, match="layer.hsw2v.*not a JSON object"):
        HierarchicalSoftmax.load(path)


def test_layer_constructors_check_seed_and_sizes():
    for call, pattern in [
        (lambda: HierarchicalSoftmax.from_counts([3, 1], dim=2, seed=2**70), "seed must be"),
        (lambda: HierarchicalSoftmax.balanced(4, dim=2, seed=-1), "seed must be"),
        (lambda: HierarchicalSoftmax.balanced(4, dim=2**40), "dim must be a positive integer"),
        (
            lambda: HierarchicalSoftmax.balanced(2, dim=2).fit(np.eye(2), [0, 1], epochs=2**40),
            "epochs must be a positive integer",
        ),
        (
            lambda: HierarchicalSoftmax.balanced(2, dim=2).fit(np.eye(2), [0, 1], lr=np.inf),
            "need lr > 0",
        ),
        (
            lambda: HierarchicalSoftmax.balanced(2, dim=2).fit(np.eye(2), [0, 1], min_lr=np.nan),
            "need lr > 0",
        ),
    ]:
        with pytest.raises(ValueError, match=pattern):
            call()


# ---------------------------------------------------------------- issue item 7
def test_counts_whose_sum_overflows_int64_are_refused_clearly():
    for counts in ([2**62, 2**62, 5], np.array([2**63 - 1, 2**63 - 1]), [1e30, 1.0]):
        with pytest.raises(ValueError, match="sum to about .* more than 2\\*\\*62"):
            HierarchicalSoftmax.from_counts(counts, dim=2)
    with pytest.raises(ValueError, match="finite and non-negative"):
        HierarchicalSoftmax.from_counts([float("nan"), 1.0], dim=2)


def test_numpy_str_tokens_are_accepted_as_str():
    sentences = [[np.str_(w) for w in "a b c a b".split()], ["a", "c"]] * 20
    model = Word2Vec(sentences, vector_size=4, min_count=1, workers=2, epochs=2)
    assert model.wv.index_to_key == ["a", "b", "c"]
    assert all(type(key) is str for key in model.wv.index_to_key)
    assert model.wv.expandos["count"].tolist() == [60, 40, 40]
    plain = Word2Vec(
        [[str(w) for w in s] for s in sentences], vector_size=4, min_count=1, workers=1, epochs=2
    )
    one = Word2Vec(sentences, vector_size=4, min_count=1, workers=1, epochs=2)
    np.testing.assert_array_equal(one.wv.vectors, plain.wv.vectors)


def test_cli_checks_the_output_folder_before_training(tmp_path, capsys):
    from hsw2v.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("a b c a b\n" * 50)
    if os.geteuid() == 0:  # root writes anywhere a permission bit allows: use /proc instead
        target = "/proc/hsw2v-no-such-place.hsw2v"
        if not os.path.isdir("/proc"):
            pytest.skip("needs a folder root cannot write")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        target = str(locked / "m.hsw2v")
    started = time.perf_counter()
    status = main(["train", str(corpus), "-o", target, "--min-count", "1", "--iter", "50"])
    err = capsys.readouterr().err
    assert status != 0 and "is not writable" in err and "choose another output path" in err
    assert "EPOCH" not in err and time.perf_counter() - started < 5


def test_cli_info_on_a_truncated_bundle_says_truncated(tmp_path, saved, capsys):
    from hsw2v.cli import main

    data = saved.read_bytes()
    for cut in (len(data) // 3, len(data) - 30):
        cut_path = tmp_path / "cut.hsw2v"
        cut_path.write_bytes(data[:cut])
        status = main(["info", str(cut_path)])
        err = capsys.readouterr().err
        assert status != 0 and "truncated" in err and "not a model" not in err, err


def test_null_word_is_not_added_twice_when_the_corpus_holds_it():
    """Found by the fuzzer: a corpus holding "\\0" with null_word=1 gave a vocabulary with the
    word twice (index_to_key longer than key_to_index)."""
    model = Word2Vec([["\0", "a", "b"]] * 5, vector_size=4, min_count=1, workers=1, null_word=1)
    assert sorted(model.wv.index_to_key) == ["\0", "a", "b"]
    assert len(model.wv.key_to_index) == len(model.wv.index_to_key) == 3
