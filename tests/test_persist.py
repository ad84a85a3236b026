"""Tests of the pickle-free bundle format in hsw2v.persist."""

import io
import json
import os
import zipfile

import numpy as np
import pytest

from hsw2v.persist import FORMAT_VERSION, load_bundle, save_bundle

ARRAYS = {
    "empty": np.zeros((0,), dtype=np.float64),
    "empty2d": np.zeros((0, 7), dtype=np.float32),
    "f32": np.arange(15, dtype=np.float32).reshape(5, 3) / 7,
    "i32": np.array([-(2**31), 0, 2**31 - 1], dtype=np.int32),
    "u8": np.arange(256, dtype=np.uint8),
    "flags": np.array([True, False, True]),
    "f64.big-endian": np.array([1.5, -2.25], dtype=">f8"),
    "fortran": np.asfortranarray(np.arange(6, dtype=np.int64).reshape(2, 3)),
    "scalar": np.array(7, dtype=np.uint32),
}
META = {"vector_size": 3, "words": ["a", "é", "日本"], "nested": {"x": [1, 2.5, None]}}


def assert_same_arrays(got, want):
    assert set(got) == set(want)
    for name, arr in want.items():
        assert got[name].dtype == arr.dtype, name
        assert got[name].shape == arr.shape, name
        np.testing.assert_array_equal(got[name], arr, err_msg=name)


def write_zip(path, members):
    """Write a zip holding `members` (name -> bytes), as a hand-crafted bundle."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def npy_bytes(arr, allow_pickle=False):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def meta_doc(arrays, version=FORMAT_VERSION, kind="Test"):
    """A meta.json document describing `arrays`, computed independently of the module."""
    import hashlib

    entries = {
        name: {
            "dtype": np.lib.format.dtype_to_descr(arr.dtype),
            "shape": list(arr.shape),
            "sha256": hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest(),
        }
        for name, arr in arrays.items()
    }
    return json.dumps(
        {"format": "hsw2v", "format_version": version, "kind": kind, "meta": {}, "arrays": entries}
    ).encode()


@pytest.fixture
def bundle(tmp_path):
    path = tmp_path / "model.hsw2v"
    save_bundle(path, "Test", META, ARRAYS)
    return path


def test_round_trip_dtypes_and_shapes(bundle):
    meta, arrays = load_bundle(bundle, kind="Test")
    assert meta == META
    assert_same_arrays(arrays, ARRAYS)
    assert all(type(a) is np.ndarray for a in arrays.values())


def test_file_is_a_plain_uncompressed_zip_of_npy_members(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as zf:
        assert zf.testzip() is None
        names = sorted(zf.namelist())
        assert names == sorted(["meta.json"] + [n + ".npy" for n in ARRAYS])
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_STORED}
        doc = json.loads(zf.read("meta.json"))
        assert doc["format"] == "hsw2v" and doc["format_version"] == 1 and doc["kind"] == "Test"
        assert doc["arrays"]["f32"] == {
            "dtype": "<f4",
            "shape": [5, 3],
            "sha256": doc["arrays"]["f32"]["sha256"],
        }
        # each member is a standard .npy file that numpy reads by itself
        for name, arr in ARRAYS.items():
            got = np.load(io.BytesIO(zf.read(name + ".npy")), allow_pickle=False)
            np.testing.assert_array_equal(got, arr)


def test_saving_twice_gives_identical_bytes(tmp_path):
    a, b = tmp_path / "a.hsw2v", tmp_path / "b.hsw2v"
    save_bundle(a, "Test", META, ARRAYS)
    save_bundle(str(b), "Test", META, ARRAYS)
    assert a.read_bytes() == b.read_bytes()


def test_mmap_read_only_views(bundle):
    meta, arrays = load_bundle(bundle, mmap="r")
    assert meta == META
    assert_same_arrays(arrays, ARRAYS)
    for name, arr in arrays.items():
        assert isinstance(arr, np.memmap), name
        assert not arr.flags.writeable, name
        if arr.size:
            assert arr.ctypes.data % 64 == 0, f"{name} data is not 64-byte aligned"
    with pytest.raises(ValueError):
        arrays["f32"][0, 0] = 1.0


def test_mmap_copy_on_write_leaves_file_alone(bundle):
    _, arrays = load_bundle(bundle, mmap="c")
    arrays["f32"][:] = -1.0
    np.testing.assert_array_equal(arrays["f32"], -1.0)
    _, again = load_bundle(bundle)
    assert_same_arrays(again, ARRAYS)


def test_mmap_read_write_is_refused_and_leaves_the_file_loadable(bundle):
    # writes through 'r+' would land in the bundle under its recorded checksums
    with pytest.raises(ValueError, match="mmap='r\\+' is not supported.*mmap='c'"):
        load_bundle(bundle, mmap="r+")
    _, again = load_bundle(bundle)
    assert_same_arrays(again, ARRAYS)


def test_bad_mmap_mode(bundle):
    with pytest.raises(ValueError, match="mmap"):
        load_bundle(bundle, mmap="w+")


def test_object_arrays_are_refused(tmp_path):
    with pytest.raises(TypeError, match="object"):
        save_bundle(tmp_path / "x", "Test", {}, {"o": np.array([{"a": 1}], dtype=object)})
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../evil", "a/b", "..", "", ".hidden", "a\\b", "x..y", 3])
def test_unsafe_names_are_refused_on_save(tmp_path, name):
    with pytest.raises(ValueError, match="unsafe"):
        save_bundle(tmp_path / "x", "Test", {}, {name: np.zeros(1)})
    assert list(tmp_path.iterdir()) == []


class ExplodesOnConversion:
    """Converting this to an array raises, like a failing computation mid-save."""

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("boom while saving")


@pytest.mark.parametrize(
    "bad_arrays, error",
    [
        ({"good": np.ones(1000), "bad": np.array([None, 1], dtype=object)}, TypeError),
        ({"good": np.ones(1000), "bad": ExplodesOnConversion()}, RuntimeError),
    ],
)
def test_failed_save_keeps_previous_file(bundle, tmp_path, bad_arrays, error):
    before = bundle.read_bytes()
    with pytest.raises(error):
        save_bundle(bundle, "Test", {"new": True}, bad_arrays)
    assert bundle.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [bundle.name]  # no temp file left
    meta, arrays = load_bundle(bundle)
    assert meta == META
    assert_same_arrays(arrays, ARRAYS)


def test_unserialisable_meta_keeps_previous_file(bundle, tmp_path):
    before = bundle.read_bytes()
    with pytest.raises(TypeError):
        save_bundle(bundle, "Test", {"x": object()}, {"a": np.ones(3)})
    assert bundle.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [bundle.name]


def test_save_replaces_previous_file(bundle):
    save_bundle(bundle, "Other", {"v": 2}, {"a": np.arange(3)})
    meta, arrays = load_bundle(bundle, kind="Other")
    assert meta == {"v": 2}
    assert_same_arrays(arrays, {"a": np.arange(3)})


def test_truncated_files_are_detected(bundle, tmp_path):
    data = bundle.read_bytes()
    cut = tmp_path / "cut.hsw2v"
    for length in [0, 1, 3, 4, 29, 100, len(data) // 3, len(data) // 2, len(data) - 23,
                   len(data) - 1]:  # fmt: skip
        cut.write_bytes(data[:length])
        with pytest.raises(ValueError, match="truncated or corrupted") as info:
            load_bundle(cut)
        assert "cut.hsw2v" in str(info.value), length


def test_flipped_byte_in_array_data_is_detected(bundle, tmp_path):
    with zipfile.ZipFile(bundle) as zf:
        info = zf.getinfo("u8.npy")
    data = bytearray(bundle.read_bytes())
    pos = data.index(bytes(range(256)))  # the u8 array's data
    assert info.header_offset < pos < info.header_offset + 30 + 200 + info.compress_size
    data[pos + 100] ^= 0x10
    bad = tmp_path / "bad.hsw2v"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="bad.hsw2v.*truncated or corrupted.*checksum"):
        load_bundle(bad)


def test_flipped_byte_in_meta_json_is_detected(bundle, tmp_path):
    data = bytearray(bundle.read_bytes())
    data[data.index(b'"vector_size"') + 3] ^= 0x01
    bad = tmp_path / "bad.hsw2v"
    bad.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="truncated or corrupted"):
        load_bundle(bad)


def test_no_single_flipped_byte_gives_wrong_data(tmp_path):
    """Every one-byte change either raises ValueError or loads the original contents."""
    arrays = {"v": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.array([True, False])}
    good = tmp_path / "good.hsw2v"
    save_bundle(good, "Test", {"k": "v"}, arrays)
    data = good.read_bytes()
    bad = tmp_path / "bad.hsw2v"
    detected = 0
    for pos in range(len(data)):
        changed = bytearray(data)
        changed[pos] ^= 0x41
        bad.write_bytes(bytes(changed))
        try:
            meta, got = load_bundle(bad)
        except ValueError:
            detected += 1
            continue
        assert meta == {"k": "v"}, pos
        assert_same_arrays(got, arrays)
    assert detected > len(data) // 2


def test_missing_member_is_detected(tmp_path):
    arr = np.arange(4)
    path = tmp_path / "missing.hsw2v"
    write_zip(path, {"meta.json": meta_doc({"a": arr, "b": arr})})
    with pytest.raises(ValueError, match="missing.hsw2v.*truncated or corrupted.*missing"):
        load_bundle(path)


def test_size_mismatch_is_detected(tmp_path):
    path = tmp_path / "size.hsw2v"
    write_zip(path, {"meta.json": meta_doc({"a": np.arange(4)}), "a.npy": npy_bytes(np.arange(5))})
    with pytest.raises(ValueError, match="truncated or corrupted"):
        load_bundle(path)


def test_hand_made_bundle_with_ordinary_zip_layout_loads(tmp_path):
    arr = np.linspace(0, 1, 5, dtype=np.float32)
    path = tmp_path / "plain.hsw2v"
    write_zip(path, {"meta.json": meta_doc({"a": arr}), "a.npy": npy_bytes(arr), "extra": b"x"})
    for mmap in (None, "r"):
        _, arrays = load_bundle(path, mmap=mmap)
        assert_same_arrays(arrays, {"a": arr})


def test_newer_format_version_asks_to_upgrade(tmp_path):
    path = tmp_path / "future.hsw2v"
    write_zip(path, {"meta.json": meta_doc({}, version=FORMAT_VERSION + 1)})
    with pytest.raises(ValueError) as info:
        load_bundle(path)
    msg = str(info.value)
    assert "future.hsw2v" in msg and "upgrade hsw2v" in msg
    assert f"version {FORMAT_VERSION + 1}" in msg and f"up to {FORMAT_VERSION}" in msg


def test_wrong_kind(bundle):
    with pytest.raises(ValueError, match="model.hsw2v.*'Test'.*'KeyedVectors'"):
        load_bundle(bundle, kind="KeyedVectors")


def test_not_a_bundle(tmp_path):
    text = tmp_path / "vectors.txt"
    text.write_text("2 3\na 1 2 3\n")
    with pytest.raises(ValueError, match="vectors.txt.*not an hsw2v bundle"):
        load_bundle(text)
    other = tmp_path / "other.zip"
    write_zip(other, {"readme.txt": b"hello"})
    with pytest.raises(ValueError, match="other.zip.*not an hsw2v bundle"):
        load_bundle(other)
    foreign = tmp_path / "foreign.zip"
    write_zip(foreign, {"meta.json": b'{"format": "something else"}'})
    with pytest.raises(ValueError, match="foreign.zip.*not an hsw2v bundle"):
        load_bundle(foreign)
    empty = tmp_path / "empty.hsw2v"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty.hsw2v.*truncated or corrupted"):
        load_bundle(empty)


def test_unsafe_member_name_in_meta_is_refused(tmp_path):
    path = tmp_path / "evil.hsw2v"
    arr = np.arange(3)
    write_zip(path, {"meta.json": meta_doc({"../evil": arr}), "../evil.npy": npy_bytes(arr)})
    with pytest.raises(ValueError, match="evil.hsw2v.*unsafe"):
        load_bundle(path)


class WritesMarker:
    """Unpickling this creates a marker file, standing in for arbitrary code."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("claimed_dtype", ["|O", "<f8"])
def test_pickle_payload_is_never_executed(tmp_path, claimed_dtype):
    marker = tmp_path / "pwned"
    payload = npy_bytes(np.array([WritesMarker(marker)], dtype=object), allow_pickle=True)
    doc = json.loads(meta_doc({"x": np.zeros(1)}))
    doc["arrays"]["x"]["dtype"] = claimed_dtype
    path = tmp_path / "payload.hsw2v"
    write_zip(path, {"meta.json": json.dumps(doc).encode(), "x.npy": payload})
    for mmap in (None, "r"):
        with pytest.raises(ValueError, match="payload.hsw2v"):
            load_bundle(path, mmap=mmap)
        assert not marker.exists()
    # the payload is live: unpickling it the unsafe way does create the marker
    with zipfile.ZipFile(path) as zf:
        np.load(io.BytesIO(zf.read("x.npy")), allow_pickle=True)
    assert marker.exists()


def test_accepts_str_and_pathlike(tmp_path):
    path = tmp_path / "p.hsw2v"
    save_bundle(os.fspath(path), "Test", {}, {"a": np.arange(2)})
    _, by_str = load_bundle(os.fspath(path))
    _, by_path = load_bundle(path)
    np.testing.assert_array_equal(by_str["a"], by_path["a"])
