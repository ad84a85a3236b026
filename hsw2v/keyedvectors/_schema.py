"""The KeyedVectors file schema: what :meth:`hsw2v.KeyedVectors.save` writes into a bundle and
how :meth:`~hsw2v.KeyedVectors.load` checks and rebuilds the vectors from it.

:mod:`hsw2v.persist` knows only the generic bundle (JSON metadata and ``.npy`` arrays in a
zip); this module, beside the model, knows what a KeyedVectors bundle holds:

``meta``
    ``vector_size``, ``index_to_key`` (str or int keys), ``next_index``, ``expandos`` (attribute
    name -> array name) and, if any, ``ragged_expandos`` (attribute name -> the names of its
    concatenated values and per-key lengths: gensim's per-key ``code`` and ``point`` arrays).
arrays
    ``vectors`` (one row per key) and one array per per-key attribute.

A subclass adds a section of its own to ``meta`` (and its arrays): a file with a ``fasttext``
section holds :class:`hsw2v.fasttext._keyedvectors.FastTextKeyedVectors` (its part is told in
:mod:`hsw2v.fasttext._schema`), which ``KeyedVectors.load`` returns. hsw2v versions before it
read such a file as the plain KeyedVectors it also is (the composed word vectors).

Nothing a file holds is trusted: :func:`kv_from_bundle_parts` checks every field before an
object is built on it.
"""

from __future__ import annotations

import importlib
import logging

import numpy as np

from hsw2v._gensim.files import explain_save_options, not_a_bundle_error
from hsw2v.exceptions import WrongFileKindError
from hsw2v.persist import load_bundle, refuse_unloadable, save_bundle

logger = logging.getLogger(__name__)

BUNDLE_KIND = "KeyedVectors"
# The meta sections that mark a subclass's bundle, and the subclass. Looked up by name when a
# file holds one: the subclass's module imports this package, so this one cannot import it.
SUBCLASS_SECTIONS = {"fasttext": ("hsw2v.fasttext._keyedvectors", "FastTextKeyedVectors")}


def bundle_class(cls, meta, source):
    """The class that rebuilds a bundle's `meta` for ``cls.load``: `cls` itself, or the
    subclass a section of `meta` names when `cls` is one of its bases (``KeyedVectors.load``
    of a FastTextKeyedVectors file). A file without the section `cls` needs, or with another
    one, is a :class:`~hsw2v.exceptions.WrongFileKindError`."""
    wanted = getattr(cls, "_bundle_section", None)
    found = [name for name in SUBCLASS_SECTIONS if isinstance(meta, dict) and name in meta]
    if not found:
        if wanted is None:
            return cls
        raise WrongFileKindError(
            f"{source!r} holds plain KeyedVectors, not {cls.__name__}: load it with "
            "KeyedVectors.load"
        )
    module, name = SUBCLASS_SECTIONS[found[0]]
    subclass = getattr(importlib.import_module(module), name)
    if issubclass(cls, subclass):
        return cls
    if issubclass(subclass, cls):
        return subclass
    raise WrongFileKindError(f"{source!r} holds {name}, not {cls.__name__}: load it with {name}")


def save_kv(kv, fname, separately, sep_limit, ignore, pickle_protocol):
    """Write `kv` to `fname` as one bundle; gensim's ``save()`` options are explained, not used."""
    stored = ("vectors", "index_to_key", "key_to_index", "expandos", "vector_size")
    meta, arrays = kv._bundle_parts()
    stored += tuple(sorted(a for a in arrays if a != "vectors" and not a.startswith("expando_")))
    explain_save_options(separately, sep_limit, ignore, pickle_protocol, stored)
    refuse_unloadable(  # load's checks first
        fname,
        BUNDLE_KIND,
        "these vectors",
        lambda: type(kv)._from_bundle_parts(meta, arrays, source=str(fname)),
        meta["index_to_key"],
    )
    save_bundle(fname, BUNDLE_KIND, meta, arrays)


def load_kv(cls, fname, mmap=None):
    """A `cls` instance from the bundle :func:`save_kv` wrote to `fname` (``mmap='r'`` maps)."""
    try:
        meta, arrays = load_bundle(fname, mmap=mmap, kind=BUNDLE_KIND)
    except WrongFileKindError:
        raise
    except ValueError as exc:
        error = not_a_bundle_error(exc, fname, "KeyedVectors")
        if error is exc:
            raise
        raise error from None
    target = bundle_class(cls, meta, str(fname))
    return target._from_bundle_parts(meta, arrays, source=str(fname))


def kv_bundle_parts(kv):
    """``(meta, arrays)`` describing `kv`, for :mod:`hsw2v.persist` bundles."""
    keys = []
    for key in kv.index_to_key:
        if isinstance(key, np.integer):
            key = int(key)
        if key is not None and not isinstance(key, (str, int)):
            raise TypeError(f"cannot save key {key!r} of type {type(key).__name__}")
        keys.append(key)
    arrays = {"vectors": np.asarray(kv.vectors)}
    expandos, ragged = {}, {}
    for n, (attr, values) in enumerate(kv.expandos.items()):
        values = np.asarray(values)
        if values.dtype.hasobject:
            flat = _ragged(values)
            if flat is None:
                logger.warning(
                    "not saving attribute %r: it holds Python objects other than numeric "
                    "arrays (only numbers and per-key numeric arrays are saved)",
                    attr,
                )
                continue
            ragged[attr] = [f"expando_{n}_values", f"expando_{n}_lengths"]
            arrays[f"expando_{n}_values"], arrays[f"expando_{n}_lengths"] = flat
            continue
        expandos[attr] = f"expando_{n}"
        arrays[f"expando_{n}"] = values
    meta = {
        "vector_size": int(kv.vector_size),
        "index_to_key": keys,
        "next_index": int(kv.next_index),
        "expandos": expandos,
    }
    if ragged:
        meta["ragged_expandos"] = ragged
    return meta, arrays


def kv_from_bundle_parts(cls, meta, arrays, source="bundle"):
    """Rebuild a `cls` instance from :func:`kv_bundle_parts` output read from `source`.

    Everything is checked before use, so a crafted file gives a ValueError, never an
    object that fails later."""

    def bad(what):
        return ValueError(f"{source!r} holds inconsistent KeyedVectors data: {what}")

    try:
        vectors = arrays["vectors"]
        keys = meta["index_to_key"]
        vector_size = meta["vector_size"]
        names = meta["expandos"]
        next_index = meta["next_index"]
        expandos = {attr: arrays[name] for attr, name in names.items()}
        ragged = {
            attr: (arrays[values], arrays[lengths])
            for attr, (values, lengths) in meta.get("ragged_expandos", {}).items()
        }
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"{source!r} holds incomplete KeyedVectors data ({exc!r})") from exc
    for name, value in (("vector_size", vector_size), ("next_index", next_index)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise bad(f"{name} is {value!r}, not an integer >= 0")
    if not isinstance(keys, list) or not all(
        key is None or (isinstance(key, (str, int)) and not isinstance(key, bool)) for key in keys
    ):
        raise bad("index_to_key is not a list of str or int keys")
    key_to_index = {key: i for i, key in enumerate(keys) if key is not None}
    if len(key_to_index) != sum(key is not None for key in keys):
        raise bad("index_to_key holds a key twice")
    if vectors.dtype.kind != "f" or vectors.shape != (len(keys), vector_size):
        raise bad(
            f"vectors of dtype {vectors.dtype} and shape {vectors.shape} for {len(keys)} "
            f"keys of {vector_size} dimensions"
        )
    for attr, values in expandos.items():
        if not isinstance(attr, str) or values.shape != (len(keys),):
            raise bad(f"attribute {attr!r} of shape {values.shape} for {len(keys)} keys")
    for attr, (values, lengths) in ragged.items():
        if (
            not isinstance(attr, str)
            or attr in expandos
            or values.ndim != 1
            or values.dtype.kind not in "iuf"
            or lengths.shape != (len(keys),)
            or lengths.dtype.kind not in "iu"
            or (len(lengths) and (lengths.min() < 0 or lengths.max() > len(values)))
            or int(lengths.sum()) != len(values)
        ):
            raise bad(f"per-key arrays {attr!r} do not fit {len(keys)} keys")
        expandos[attr] = _unragged(values, lengths)
    kv = cls(vector_size, 0, dtype=vectors.dtype)
    kv.vectors, kv.index_to_key, kv.expandos, kv.next_index = (
        vectors,
        keys,
        expandos,
        next_index,
    )
    kv.key_to_index = key_to_index
    return kv


def _ragged(values: np.ndarray):
    """An object array of per-key 1-D numeric arrays (gensim's ``code`` and ``point``) as
    ``(concatenated values, lengths)``, or None if it holds anything else."""
    items = []
    for item in values:
        item = np.asarray(item) if isinstance(item, (np.ndarray, list, tuple)) else None
        if item is None or item.ndim != 1 or (item.dtype.kind not in "iuf" and len(item)):
            return None
        items.append(item)
    if not items:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lengths = np.array([len(item) for item in items], dtype=np.int64)
    typed = [item.dtype for item in items if len(item)] or [items[0].dtype]
    return np.concatenate(items).astype(np.result_type(*typed), copy=False), lengths


def _unragged(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The object array :func:`_ragged` flattened: one view into ``values`` per key."""
    out = np.empty(len(lengths), dtype=object)
    ends = np.cumsum(lengths)
    for i, (start, end) in enumerate(zip(ends - lengths, ends, strict=True)):
        out[i] = values[start:end]
    return out
