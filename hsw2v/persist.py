"""The native, pickle-free file format of hsw2v: metadata and arrays bundled in one file.

A bundle is an ordinary, uncompressed zip archive (PKWARE APPNOTE.TXT, method 0 "stored",
ZIP64 headers) holding:

``meta.json``
    UTF-8 JSON, ``{"format": "hsw2v", "format_version": 1, "kind": KIND, "meta": {...},
    "arrays": {NAME: {"dtype": DESCR, "shape": [...], "sha256": HEX}}}``. ``DESCR`` is the
    dtype description used in .npy headers (e.g. ``"<f4"``); ``sha256`` is the digest of the
    array's data bytes in C order.
``NAME.npy``
    One standard NumPy ``.npy`` file (format 1.0/2.0/3.0, see ``numpy.lib.format``) per array.

Every member's data starts at a multiple of 64 bytes from the start of the file: the local
header of each ``.npy`` member is padded with an "alignment" extra field (header id
``0xD935``, as defined by Android's ``zipalign``), and the ``.npy`` header itself is padded to
a multiple of 64 bytes, so the array data is 64-byte aligned and can be memory mapped in place.

A bundle is written all or nothing (:func:`atomic_file`, from :mod:`hsw2v._atomic_files`,
whose names this module re-exports).

Loading never unpickles anything: object arrays are refused both when saving and when loading,
so reading an untrusted bundle cannot run code. Any zip tool can list and extract a bundle,
and ``numpy.load`` reads each extracted member.

Example
-------
>>> import os, tempfile
>>> import numpy as np
>>> from hsw2v.persist import save_bundle, load_bundle
>>> path = os.path.join(tempfile.mkdtemp(), "demo.hsw2v")
>>> save_bundle(path, "Demo", {"answer": 42}, {"x": np.arange(3, dtype=np.int32)})
>>> meta, arrays = load_bundle(path, kind="Demo")
>>> meta["answer"], arrays["x"].tolist()
(42, [0, 1, 2])
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import zipfile

import numpy as np

from hsw2v._atomic_files import (  # noqa: F401 - public here too, as before they moved
    STALE_TEMP_SECONDS,
    atomic_commit,
    atomic_file,
    atomic_temp,
    discard_temp,
    sweep_stale_temps,
)
from hsw2v._paths import require_regular_file
from hsw2v.exceptions import WrongFileKindError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "save_bundle",
    "load_bundle",
]

FORMAT_NAME = "hsw2v"
FORMAT_VERSION = 1

_META_MEMBER = "meta.json"
_ALIGN = 64
_ALIGN_EXTRA_ID = 0xD935  # zipalign's "alignment" extra field: uint16 alignment + zero padding
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # 30 bytes, APPNOTE 4.3.7
_LOCAL_MAGIC = b"PK\x03\x04"
_ZIP64_EXTRA_LEN = 20  # header id, size, uncompressed and compressed sizes (force_zip64)
_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}\Z")
# 'r+' (writes into the bundle itself) is refused: training or any edit would change the
# arrays in place under their recorded checksums, and the file would no longer load.
_MMAP_MODES = ("r", "c")
# meta.json holds the parameters and the vocabulary (about 20 bytes a word): 512 MiB fits
# some 25 million words. A compressed member may inflate at most _MAX_RATIO times (JSON
# deflates about 5-10 times; a zip bomb about 1000 times).
_META_MAX_BYTES = 512 << 20
_MAX_RATIO = 100


class _Corrupt(Exception):
    """Internal: the bundle is damaged; turned into a ValueError naming the file."""


class _Reported(ValueError):
    """Internal: a complete, user-facing error about the bundle (passed through as it is)."""


def _check_name(name) -> str:
    if not isinstance(name, str) or not _SAFE_NAME.match(name) or ".." in name:
        raise ValueError(
            f"unsafe array name {name!r}: use letters, digits, '_', '-' and '.', no '/' and no '..'"
        )
    return name


def _data_sha256(arr: np.ndarray) -> str:
    """SHA-256 of the array's data bytes in C order."""
    flat = np.ascontiguousarray(arr).reshape(-1)
    return hashlib.sha256(flat.view(np.uint8) if flat.size else b"").hexdigest()


def _descr(dtype: np.dtype):
    """The JSON form of a dtype's .npy description (strings stay strings, tuples become lists)."""
    return json.loads(json.dumps(np.lib.format.dtype_to_descr(dtype)))


def _write_npy_member(zf: zipfile.ZipFile, fh, name: str, arr: np.ndarray) -> dict:
    """Write `arr` as member ``name.npy`` with 64-byte aligned data; return its meta entry."""
    if arr.dtype.hasobject:
        raise TypeError(
            f"array {name!r} has dtype {arr.dtype}, which holds Python objects; "
            "object arrays cannot be stored without pickle"
        )
    if not arr.flags.c_contiguous:
        arr = arr.copy(order="C")
    member = name + ".npy"
    start = fh.tell()
    pad = -(start + _LOCAL_HEADER.size + len(member) + _ZIP64_EXTRA_LEN) % _ALIGN
    if pad < 6:  # the extra field needs 4 bytes of header and 2 of alignment value
        pad += _ALIGN
    info = zipfile.ZipInfo(member)
    info.compress_type = zipfile.ZIP_STORED
    info.extra = struct.pack("<HHH", _ALIGN_EXTRA_ID, pad - 4, _ALIGN) + bytes(pad - 6)
    with zf.open(info, "w", force_zip64=True) as out:
        if fh.tell() % _ALIGN:  # the layout of zipfile's local header changed under us
            raise RuntimeError(f"could not align member {member!r}")
        digest = _write_npy(out, arr)
    return {"dtype": _descr(arr.dtype), "shape": list(arr.shape), "sha256": digest}


_CHUNK = 16 << 20  # bytes copied, digested and written at a time


def _write_npy(out, arr: np.ndarray) -> str:
    """Write ``arr`` (C-contiguous) as a ``.npy`` file into ``out``; return the SHA-256 of
    the data bytes written. Each chunk is copied once, then digested and written from that
    copy, so the recorded digest is always that of the bytes in the file, even while
    another thread writes the array (a ``save()`` during ``train()``): such a file holds
    each chunk as it was when copied, and always loads.

    >>> import io
    >>> buf, arr = io.BytesIO(), np.arange(6, dtype=np.int32).reshape(2, 3)
    >>> _write_npy(buf, arr) == _data_sha256(arr)
    True
    >>> _ = buf.seek(0); np.lib.format.read_array(buf).tolist()
    [[0, 1, 2], [3, 4, 5]]
    """
    header = np.lib.format.header_data_from_array_1_0(arr)
    try:
        np.lib.format.write_array_header_1_0(out, header)
    except ValueError:  # a header over 64 KiB (a very long shape or dtype)
        np.lib.format.write_array_header_2_0(out, header)
    digest = hashlib.sha256()
    data = arr.reshape(-1).view(np.uint8) if arr.size else np.zeros(0, np.uint8)
    for start in range(0, len(data), _CHUNK):
        chunk = data[start : start + _CHUNK].tobytes()
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest()


def refuse_unloadable(path, kind: str, what: str, check, keys) -> None:
    """``save()`` never writes what ``load()`` would refuse: ``check()`` runs ``kind``'s load
    checks on what is about to be written, and the keys must encode as the metadata's UTF-8
    JSON; a failure is a ValueError naming what is wrong before any file is touched (a good
    file at ``path`` stays). ``what``: how the message names the object ("this model")."""
    try:
        check()
        json.dumps(keys, ensure_ascii=False).encode("utf-8")
    except (ValueError, TypeError) as exc:
        detail = str(exc).split(f"holds inconsistent {kind} data: ", 1)[-1]
        raise ValueError(
            f"not saved to {os.fspath(path)!r}: {kind}.load() would refuse {what} "
            f"({detail}); nothing was written"
        ) from None


def _json_scalar(value):
    """``json.dumps``'s fallback for the metadata: a NumPy scalar (a setting such as
    ``np.float32(0.75)``, from a NumPy grid of parameters) as the Python number or bool it
    holds; anything else is a TypeError that names its type."""
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    raise TypeError(
        f"the metadata holds a {type(value).__name__} ({value!r:.80}), which a model file "
        "cannot store: give settings as numbers, strings, lists or dicts"
    )


def save_bundle(path, kind: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Write `meta` and `arrays` into one bundle file at `path`, atomically.

    The bundle is first written to a temporary file in the same directory, flushed and synced,
    then renamed onto `path`. If anything fails, the temporary file is removed and a previous
    file at `path` is left untouched.

    Parameters
    ----------
    path : str or os.PathLike
        Destination file.
    kind : str
        What the bundle holds (e.g. ``"KeyedVectors"``); :func:`load_bundle` can insist on it.
    meta : dict
        JSON-serialisable metadata (NumPy scalars are stored as the numbers they hold).
    arrays : dict of str to numpy.ndarray
        Arrays to store. Names may use letters, digits, ``_``, ``-`` and ``.``.

    Raises
    ------
    TypeError
        If an array has an object dtype, or `meta` is not JSON-serialisable.
    ValueError
        If an array name is unsafe.

    Example
    -------
    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "vectors.hsw2v")
    >>> save_bundle(path, "Demo", {"n": 2}, {"v": np.ones((2, 3), dtype=np.float32)})
    >>> load_bundle(path)[1]["v"].shape
    (2, 3)
    """
    path = os.fspath(path)
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a str, not {type(kind).__name__}")
    for name in arrays:
        _check_name(name)
    json.dumps(meta, default=_json_scalar)  # fail before any file is touched if it cannot
    with atomic_file(path) as (fd, _tmp):
        with os.fdopen(fd, "w+b") as fh:
            entries = {}
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
                for name, arr in arrays.items():
                    entries[name] = _write_npy_member(zf, fh, name, np.asarray(arr))
                header = {
                    "format": FORMAT_NAME,
                    "format_version": FORMAT_VERSION,
                    "kind": kind,
                    "meta": meta,
                    "arrays": entries,
                }
                text = json.dumps(header, ensure_ascii=False, indent=1, default=_json_scalar)
                zf.writestr(zipfile.ZipInfo(_META_MEMBER), text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())


def _check_sizes(zf: zipfile.ZipFile, file_size: int) -> None:
    """Refuse a zip bomb before inflating anything: no member may claim more compressed bytes
    than the file has, or inflate more than ``_MAX_RATIO`` times its compressed size (the
    bundles written here store every member uncompressed)."""
    for info in zf.infolist():
        if info.compress_size > file_size:
            raise _Corrupt(f"member {info.filename!r} claims more bytes than the file holds")
        if info.compress_type != zipfile.ZIP_STORED and info.file_size > _MAX_RATIO * max(
            info.compress_size, 1
        ):
            raise _Corrupt(
                f"member {info.filename!r} would inflate {info.compress_size} bytes to "
                f"{info.file_size} (more than {_MAX_RATIO} times): refused as a zip bomb"
            )


def _read_meta_member(zf: zipfile.ZipFile) -> bytes:
    """meta.json's bytes, read as a stream that stops past ``_META_MAX_BYTES`` whatever its
    header declares (zipfile stops at the declared size and checks the CRC there)."""
    info = zf.getinfo(_META_MEMBER)
    too_big = f"{_META_MEMBER} is larger than {_META_MAX_BYTES} bytes"
    if info.file_size > _META_MAX_BYTES:
        raise _Corrupt(f"{too_big} (it declares {info.file_size})")
    with zf.open(info) as member:
        raw = member.read(_META_MAX_BYTES + 1)
    if len(raw) > _META_MAX_BYTES:
        raise _Corrupt(too_big)
    return raw


def _read_header(path: str, zf: zipfile.ZipFile, kind):
    """Read and check meta.json; return the parsed document."""
    try:
        raw = _read_meta_member(zf)
    except KeyError:
        raise _Reported(f"{path!r} is not an hsw2v bundle (it has no {_META_MEMBER})") from None
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _Corrupt(f"{_META_MEMBER} is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise _Reported(f"{path!r} is not an hsw2v bundle (its {_META_MEMBER} lacks the marker)")
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _Corrupt(f"invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise _Reported(
            f"{path!r} uses hsw2v format version {version}, but this hsw2v reads format versions "
            f"up to {FORMAT_VERSION}; upgrade hsw2v to load it"
        )
    if kind is not None and doc.get("kind") != kind:
        found = doc.get("kind")
        way_out = f"; load it with {found}.load()" if isinstance(found, str) else ""
        # also an AttributeError: gensim's load() raises that for a file of another class
        raise WrongFileKindError(f"{path!r} holds a {found!r}, not a {kind!r}{way_out}")
    if not isinstance(doc.get("arrays"), dict) or "meta" not in doc:
        raise _Corrupt(f"{_META_MEMBER} lacks 'arrays' or 'meta'")
    return doc


def _locate(fh, zf: zipfile.ZipFile, name: str, entry, file_size: int):
    """Check one array member; return ``(dtype, shape, fortran, member_start, data_offset)``."""
    if not isinstance(entry, dict):
        raise _Corrupt(f"bad entry for array {name!r}")
    try:
        want_dtype = np.lib.format.descr_to_dtype(
            entry["dtype"]
            if isinstance(entry["dtype"], str)
            else [tuple(field) for field in entry["dtype"]]
        )
        want_shape = tuple(int(n) for n in entry["shape"])
    except Exception as exc:  # numpy's dtype parser raises several kinds (even SyntaxError)
        raise _Corrupt(f"bad dtype or shape for array {name!r}") from exc
    if want_dtype.hasobject:
        raise _Corrupt(f"array {name!r} claims an object dtype, which is never loaded")
    try:
        info = zf.getinfo(name + ".npy")
    except KeyError:
        raise _Corrupt(f"member {name + '.npy'!r} is missing") from None
    if info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size:
        raise _Corrupt(f"member {info.filename!r} is not stored uncompressed")
    fh.seek(info.header_offset)
    local = fh.read(_LOCAL_HEADER.size)
    if len(local) != _LOCAL_HEADER.size or local[:4] != _LOCAL_MAGIC:
        raise _Corrupt(f"bad local header for member {info.filename!r}")
    fields = _LOCAL_HEADER.unpack(local)
    member_start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
    member_end = member_start + info.compress_size
    if member_end > file_size:
        raise _Corrupt(f"member {info.filename!r} runs past the end of the file")
    fh.seek(member_start)
    try:
        major, _ = np.lib.format.read_magic(fh)
        if major == 1:
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh)
        elif major == 2:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh)
        else:
            raise ValueError(f"unsupported .npy version {major}")
    except Exception as exc:  # numpy's header parser raises several kinds on garbage
        raise _Corrupt(f"bad .npy header in member {info.filename!r} ({exc})") from exc
    if dtype.hasobject:
        raise _Corrupt(f"member {info.filename!r} holds Python objects, which are never loaded")
    if dtype != want_dtype or tuple(shape) != want_shape:
        raise _Corrupt(f"member {info.filename!r} does not match its description")
    data_offset = fh.tell()
    if any(dim < 0 for dim in shape):
        raise _Corrupt(f"member {info.filename!r} has a negative dimension {tuple(shape)}")
    nbytes = dtype.itemsize
    for dim in shape:  # exact, in Python ints: a product that overflows int64 is not 0 here
        nbytes *= int(dim)
    if data_offset + nbytes != member_end:
        raise _Corrupt(f"member {info.filename!r} has the wrong size for its shape")
    return dtype, tuple(shape), fortran, member_start, data_offset


def load_bundle(path, mmap=None, kind=None) -> tuple[dict, dict]:
    """Read a bundle written by :func:`save_bundle`; return ``(meta, arrays)``.

    Nothing is ever unpickled. Only the members listed in ``meta.json`` are read.

    Parameters
    ----------
    path : str or os.PathLike
        The bundle file.
    mmap : {None, 'r', 'c'}, optional
        None reads every array into memory and verifies its SHA-256 digest. Otherwise each
        array is a :class:`numpy.memmap` view into the file with this mode: ``'r'`` read-only,
        ``'c'`` copy-on-write. ``'r+'`` is refused with a ValueError: writes would go into
        the bundle itself, under its checksums, and it would no longer load. Memory-mapped arrays are checked against
        the header and the file size, but their digests are not verified, since that would
        read every byte.
    kind : str, optional
        If given, the bundle must have been saved with this kind.

    Raises
    ------
    ValueError
        If the file is not an hsw2v bundle, needs a newer hsw2v, holds another kind, or is
        truncated or corrupted. The message names the file.

    Example
    -------
    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "b.hsw2v")
    >>> save_bundle(path, "Demo", {}, {"v": np.arange(4.0)})
    >>> _, arrays = load_bundle(path, mmap="r")
    >>> type(arrays["v"]).__name__, float(arrays["v"].sum())
    ('memmap', 6.0)
    """
    path = os.fspath(path)
    if mmap == "r+":
        raise ValueError(
            f"mmap='r+' is not supported: writes (training, or any edit of the arrays) would "
            f"go into {path!r} itself, under the checksums it records, and the file would no "
            "longer load. Use mmap='c' (copy on write: edits stay in memory) and save() to "
            "keep them, or mmap='r' (read-only) or None"
        )
    if mmap not in (None, *_MMAP_MODES):
        raise ValueError(f"mmap must be None or one of {_MMAP_MODES}, not {mmap!r}")
    damaged = f"{path!r} is truncated or corrupted"
    require_regular_file(path)
    with open(path, "rb") as fh:
        head = fh.read(4)
        file_size = fh.seek(0, os.SEEK_END)
        if not head:
            raise ValueError(f"{damaged}: the file is empty")
        if not _LOCAL_MAGIC.startswith(head):
            raise ValueError(f"{path!r} is not an hsw2v bundle (not a zip file)")
        try:
            meta, places, arrays = _read_all(path, fh, file_size, kind, read=mmap is None)
        except WrongFileKindError:
            raise
        except _Reported as exc:
            raise ValueError(str(exc)) from None
        except _Corrupt as exc:
            raise ValueError(f"{damaged}: {exc}") from None
        except (
            ValueError,
            zipfile.BadZipFile,
            zipfile.LargeZipFile,
            EOFError,
            OSError,
            NotImplementedError,
            RuntimeError,
            UnicodeDecodeError,
            struct.error,
            OverflowError,
            KeyError,
        ) as exc:
            raise ValueError(f"{damaged}: {type(exc).__name__}: {exc}") from None
    if mmap is not None:
        for name, (dtype, shape, fortran, _, offset) in places.items():
            order = "F" if fortran else "C"
            arrays[name] = np.memmap(
                path, dtype=dtype, mode=mmap, offset=offset, shape=shape, order=order
            )
    return meta, arrays


def _read_all(path: str, fh, file_size: int, kind, read: bool):
    """Parse and check the bundle open in `fh`; read (and verify) the arrays if `read`."""
    fh.seek(0)
    with zipfile.ZipFile(fh) as zf:
        _check_sizes(zf, file_size)
        doc = _read_header(path, zf, kind)
        places = {}
        for name, entry in doc["arrays"].items():
            if not isinstance(name, str) or not _SAFE_NAME.match(name) or ".." in name:
                raise _Corrupt(f"unsafe member name {name!r}")
            places[name] = _locate(fh, zf, name, entry, file_size)
    arrays = {}
    if read:
        for name, (dtype, shape, _, member_start, _) in places.items():
            fh.seek(member_start)
            try:
                arr = np.lib.format.read_array(fh, allow_pickle=False)
            except ValueError as exc:
                raise _Corrupt(f"cannot read array {name!r} ({exc})") from exc
            if arr.dtype != dtype or arr.shape != shape:
                raise _Corrupt(f"array {name!r} is cut short")
            if _data_sha256(arr) != doc["arrays"][name].get("sha256"):
                raise _Corrupt(f"checksum mismatch in array {name!r}")
            arrays[name] = arr
    return doc["meta"], places, arrays
