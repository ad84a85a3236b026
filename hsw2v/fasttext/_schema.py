"""The FastTextKeyedVectors part of a KeyedVectors bundle (:mod:`hsw2v.keyedvectors._schema`).

A FastTextKeyedVectors file is a KeyedVectors bundle (its ``vectors`` are the composed word
vectors) with, in addition:

``meta["fasttext"]``
    ``{"min_n": int, "max_n": int, "bucket": int, "vocab_rows": int, "ngrams": bool}``:
    the n-gram settings, the number of word rows of the input matrix (the number of keys)
    and whether its ``bucket`` n-gram rows follow them (False before they are allocated).
arrays
    ``input_matrix`` (``vocab_rows`` word rows, then the n-gram rows: fastText's layout),
    ``vectors_vocab_lockf`` and ``vectors_ngrams_lockf`` (1-D lock factors).

The n-gram buckets are not stored: they follow from the keys and the settings. As for every
bundle, each field is checked before an object is built on it.
"""

from __future__ import annotations

import numpy as np

from hsw2v.exceptions import WrongFileKindError
from hsw2v.keyedvectors import KeyedVectors
from hsw2v.keyedvectors._schema import kv_bundle_parts, kv_from_bundle_parts

SECTION = "fasttext"
_SETTINGS = ("min_n", "max_n", "bucket", "vocab_rows")


def ft_bundle_parts(kv):
    """``(meta, arrays)`` describing the FastTextKeyedVectors `kv`."""
    meta, arrays = kv_bundle_parts(kv)
    meta[SECTION] = {
        "min_n": int(kv.min_n),
        "max_n": int(kv.max_n),
        "bucket": int(kv.bucket),
        "vocab_rows": int(kv._vocab_rows),
        "ngrams": bool(kv._ngrams_allocated),
    }
    arrays["input_matrix"] = np.asarray(kv.input_matrix)
    arrays["vectors_vocab_lockf"] = np.asarray(kv.vectors_vocab_lockf)
    arrays["vectors_ngrams_lockf"] = np.asarray(kv.vectors_ngrams_lockf)
    return meta, arrays


def ft_from_bundle_parts(cls, meta, arrays, source="bundle"):
    """Rebuild a `cls` (a FastTextKeyedVectors) from :func:`ft_bundle_parts` output."""

    def bad(what):
        return ValueError(f"{source!r} holds inconsistent KeyedVectors data: {what}")

    section = meta.get(SECTION) if isinstance(meta, dict) else None
    if section is None:
        raise WrongFileKindError(
            f"{source!r} holds plain KeyedVectors, not {cls.__name__}: load it with "
            "KeyedVectors.load"
        )
    plain_meta = {key: value for key, value in meta.items() if key != SECTION}
    plain = kv_from_bundle_parts(KeyedVectors, plain_meta, arrays, source)  # checks them
    try:
        settings = [section[name] for name in _SETTINGS]
        allocated = section["ngrams"]
        matrix = arrays["input_matrix"]
        lockf = arrays["vectors_vocab_lockf"], arrays["vectors_ngrams_lockf"]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{source!r} holds incomplete KeyedVectors data ({exc!r})") from exc
    for name, value in zip(_SETTINGS, settings, strict=True):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise bad(f"{name} is {value!r}, not an integer >= 0")
    min_n, max_n, bucket, vocab_rows = settings
    if not isinstance(allocated, bool):
        raise bad(f"ngrams is {allocated!r}, not true or false")
    if vocab_rows != len(plain.index_to_key):
        raise bad(f"{vocab_rows} word rows for {len(plain.index_to_key)} keys")
    rows = vocab_rows + (bucket if allocated else 0)
    if matrix.dtype.kind != "f" or matrix.shape != (rows, plain.vector_size):
        raise bad(
            f"input_matrix of dtype {matrix.dtype} and shape {matrix.shape}, not "
            f"({rows}, {plain.vector_size})"
        )
    for name, values in zip(("vectors_vocab_lockf", "vectors_ngrams_lockf"), lockf, strict=True):
        if values.dtype.kind != "f" or values.ndim != 1:
            raise bad(f"{name} of dtype {values.dtype} and shape {values.shape}")
    kv = cls(plain.vector_size, min_n, max_n, bucket, 0, dtype=matrix.dtype)
    kv.index_to_key, kv.key_to_index = plain.index_to_key, plain.key_to_index
    kv.vectors, kv.expandos, kv.next_index = plain.vectors, plain.expandos, plain.next_index
    kv.input_matrix, kv._vocab_rows, kv._ngrams_allocated = matrix, vocab_rows, allocated
    kv.vectors_vocab_lockf, kv.vectors_ngrams_lockf = lockf
    return kv
