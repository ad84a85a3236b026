"""Word2Vec's numeric parameters: one table of what each may hold, read by every check.

The kernels cast parameters to C types (``int`` window, vector size and negatives, ``float``
learning rates, ``uint64_t`` seeds); a value outside the type would wrap or raise an
OverflowError deep inside Cython. Each entry here gives the kind and the closed range a
value must lie in, chosen so that every cast is exact. The constructor checks the values it
is given (:func:`check_word2vec_params`), :meth:`hsw2v.Word2Vec.load` the values a file holds
(the same function, naming the file), and ``train()`` the values a user may have assigned
since; all raise ValueError naming the parameter and its range.

>>> check_word2vec_params({"window": 5, "alpha": 0.025})
>>> check_word2vec_params({"window": 2**31})
Traceback (most recent call last):
    ...
ValueError: window must be an integer in [1, 2147483647], got 2147483648
"""

from __future__ import annotations

import math
import numbers

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
FLOAT32_MAX = 3.4028234663852886e38
# The kernels size a job's scratch as a few rows of vector_size floats in C int arithmetic;
# 2**24 floats (64 MiB) per row keeps every such product far inside int.
VECTOR_SIZE_MAX = 2**24

# Training and scoring start this many threads: a file must not ask for billions.
WORKERS_MAX = 1024

# name: (kind, low, high). Kinds: "int" (Python or NumPy integer, not bool), "flag" (0 or 1,
# bools accepted), "bool" (any truth value that is a bool or 0/1), "real" (finite real
# number), "int?" (None or "int"), "str?" (None or str), ("one of", values).
WORD2VEC_PARAMS = {
    "vector_size": ("int", 1, VECTOR_SIZE_MAX),
    "window": ("int", 1, INT32_MAX),
    "workers": ("int", 1, WORKERS_MAX),
    "batch_words": ("int", 1, INT32_MAX),
    "min_count": ("int", 0, INT64_MAX),
    "epochs": ("int", 0, INT32_MAX),
    "seed": ("int", 0, UINT64_MAX),
    "negative": ("int", 0, INT32_MAX - 1),
    "cache_words": ("int", 0, INT64_MAX),
    "max_vocab_size": ("int?", 1, INT64_MAX),
    "max_final_vocab": ("int?", 1, INT64_MAX),
    "sg": ("flag", 0, 1),
    "hs": ("flag", 0, 1),
    "cbow_mean": ("flag", 0, 1),
    "null_word": ("flag", 0, 1),
    "sorted_vocab": ("flag", 0, 1),
    "compute_loss": ("flag", 0, 1),
    "shrink_windows": ("flag", 0, 1),
    "alpha": ("real", math.ulp(0.0), FLOAT32_MAX),
    "min_alpha": ("real", 0.0, FLOAT32_MAX),
    "sample": ("real", 0.0, FLOAT32_MAX),
    "ns_exponent": ("real", -FLOAT32_MAX, FLOAT32_MAX),
    # Saved with a model, never passed by users.
    "corpus_count": ("int", 0, INT64_MAX),
    "corpus_total_words": ("int", 0, INT64_MAX),
    "train_count": ("int", 0, INT64_MAX),
    "effective_min_count": ("int", 0, INT64_MAX),
    "semantic_pending": ("flag", 0, 1),
    "running_training_loss": ("real", -math.inf, math.inf),
    "total_train_time": ("real", 0.0, math.inf),
    "kernel": (("one of", ("auto", "window", "fused", "loop", "blas")), None, None),
    "tree_type": (("one of", ("huffman", "balanced", "semantic", "callable")), None, None),
    "comment": ("str?", None, None),
}


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def param_error(name: str, value) -> str | None:
    """What is wrong with ``name=value`` (a sentence naming the range), or None if it fits.

    >>> param_error("alpha", float("inf"))
    'alpha must be a finite number in (0, 3.4028234663852886e+38], got inf'
    >>> param_error("sg", 2)
    'sg must be 0 or 1, got 2'
    >>> param_error("window", 3) is None
    True
    """
    kind, low, high = WORD2VEC_PARAMS[name]
    if kind in ("int", "int?"):
        if kind == "int?" and value is None:
            return None
        if not _is_int(value) or not low <= value <= high:
            none = "None or " if kind == "int?" else ""
            return f"{name} must be {none}an integer in [{low}, {high}], got {value!r}"
    elif kind == "flag":
        if not (_is_int(value) or isinstance(value, bool)) or value not in (0, 1):
            return f"{name} must be 0 or 1, got {value!r}"
    elif kind == "real":
        if not _is_real(value) or not low <= float(value) <= high or math.isnan(float(value)):
            value_text = repr(float(value)) if _is_real(value) else repr(value)
            if name == "alpha":
                return f"alpha must be a finite number in (0, {high}], got {value_text}"
            if not math.isfinite(high):
                return f"{name} must be a number >= {low} (not NaN), got {value_text}"
            return f"{name} must be a finite number in [{low}, {high}], got {value_text}"
    elif kind == "str?":
        if value is not None and not isinstance(value, str):
            return f"{name} must be None or a str, got {type(value).__name__}"
    else:
        allowed = kind[1]
        if not isinstance(value, str) or value not in allowed:
            return f"{name} must be one of {allowed}, got {value!r}"
    return None


def check_word2vec_params(values: dict, where: str | None = None) -> None:
    """Check every known parameter in ``values`` against :data:`WORD2VEC_PARAMS`, and
    ``min_alpha <= alpha`` and ``hs or negative`` when both are given. Raises ValueError naming
    the parameter and its range (prefixed by ``where``, e.g. a file, when given)."""
    problems = [param_error(name, values[name]) for name in WORD2VEC_PARAMS if name in values]
    problem = next((p for p in problems if p), None)
    if problem is None and "alpha" in values and "min_alpha" in values:
        if values["min_alpha"] > values["alpha"]:
            problem = f"min_alpha must be in [0, alpha], got {values['min_alpha']!r}"
    if problem is None and "hs" in values and "negative" in values:
        if not values["hs"] and not values["negative"]:
            problem = (
                "You must set either 'hs' or 'negative' to be positive for proper training. "
                "When both 'hs=0' and 'negative=0', there will be no training."
            )
    if problem is not None:
        raise ValueError(problem if where is None else f"{where}: {problem}")
