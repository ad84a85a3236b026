"""Doc2Vec's ``infer_vector``: a new document's row, trained with every other weight frozen.

The kernel's inference (``hsw2v._kernels._inner.Trainer(frozen=True)``) is the training step
itself over a frozen model: the document's row is the only row written; the outputs train
through the reference walks with a learning rate of 0 for their rows, which only read them,
and PV-DM's word rows are copies in the job's scratch (gensim's ``learn_words=False,
learn_hidden=False``). One call is one job (``_inner.infer_words``: the words mapped to ids,
then ``Trainer.infer_doc``'s job, and the row's finiteness, in one call): the new row starts
uniform in [-1/d, 1/d) from the model's seed and the words, then trains on the document's
words ``epochs`` times over, each pass led by the tag token of the new row, the rate falling
from ``alpha`` to ``min_alpha`` word by word. The trainer is built once per model state and
shared: each call trains its own row, without the GIL, so threads infer at once.
"""

from __future__ import annotations

import math
import numbers
import zlib
from dataclasses import replace

import numpy as np

from hsw2v._kernels._inner import infer_words
from hsw2v.running.objectives import outputs_of
from hsw2v.running.params import kernel_params
from hsw2v.running.trainer import trainer_settings


def _state_key(model) -> tuple:
    """What an inference trainer was built over: the arrays it borrows and the settings."""
    arrays = (
        model.wv.vectors,
        *outputs_of(model).values(),
        model.cum_table,
        model.wv.expandos.get("sample_int"),
    )
    return (*(id(a) for a in arrays), *kernel_params(model).values(), model.hs, model.negative)


def inference_trainer(model):
    """The model's frozen trainer (built at the first call, again after the model's arrays
    or settings change)."""
    key = _state_key(model)
    cached = model._inference
    if cached is not None and cached[0] == key:
        return cached[1]
    if model.tree is None:
        raise RuntimeError("infer_vector needs a trained model: build the vocabulary and train")
    settings = trainer_settings(model, threads=1)
    d = model.vector_size
    # PV-DBOW infers without the words' skip-gram step (gensim's infer_vector too)
    settings = replace(
        settings,
        walk="reference",  # the shipped Trainer (its frozen walks), whatever HSW2V_KERNEL says
        params={**settings.params, "compute_loss": False},
        docs=(np.zeros((1, d), dtype=np.float32), None, False),
        lockf=None,
    )
    trainer = settings.build(model._input_matrix(), *outputs_of(model).values(), frozen=True)
    model._inference = (key, trainer)
    return trainer


def _words_seed(doc_words: list, seed: int) -> int:
    """A 64-bit seed from the model's ``seed`` and the words (stable across processes)."""
    text = "\x1f".join(map(str, doc_words)).encode("utf-8", "surrogatepass")
    return ((int(seed) & 0xFFFFFFFF) << 32) | zlib.crc32(text)


def _checked_words(doc_words) -> list:
    """``doc_words`` as a list of str tokens, or a TypeError that says what to give: tokens
    are str, as in training (gensim's infer_vector raises a TypeError for others too)."""
    if isinstance(doc_words, (str, bytes)):
        raise TypeError(
            "doc_words is a string: give the document's words as a list of str tokens, e.g. "
            "text.split()"
        )
    if hasattr(doc_words, "words") and hasattr(doc_words, "tags"):
        raise TypeError(
            f"doc_words is a {type(doc_words).__name__}: give the document's words as a "
            "list of str tokens, e.g. infer_vector(doc.words)"
        )
    try:
        words = list(doc_words)
    except TypeError:
        raise TypeError(
            f"doc_words is a {type(doc_words).__name__}: give the document's words as a list "
            "of str tokens, e.g. text.split()"
        ) from None
    if not set(map(type, words)) <= {str}:  # str subclasses (numpy.str_) are str tokens
        for word in words:
            if not isinstance(word, str):
                raise TypeError(
                    f"doc_words holds a token of type {type(word).__name__} ({word!r:.80}): "
                    "give the document's words as a list of str tokens, as in training "
                    "(decode bytes and convert other tokens first)"
                )
    return words


def _checked_epochs(epochs, model) -> int:
    """``epochs`` (the model's when None) as an int, or a TypeError as gensim's."""
    if epochs is None:
        return model.epochs
    if not isinstance(epochs, numbers.Integral) or isinstance(epochs, (bool, np.bool_)):
        raise TypeError(
            f"infer_vector's epochs must be an integer, got {epochs!r} of type "
            f"{type(epochs).__name__}"
        )
    return int(epochs)


def infer_vector(model, doc_words, alpha=None, min_alpha=None, epochs=None) -> np.ndarray:
    """See :meth:`hsw2v.Doc2Vec.infer_vector`."""
    words = _checked_words(doc_words)
    alpha = model.alpha if alpha is None else float(alpha)
    min_alpha = model.min_alpha if min_alpha is None else float(min_alpha)
    epochs = _checked_epochs(epochs, model)
    if epochs < 0 or not math.isfinite(alpha) or not math.isfinite(min_alpha):
        raise ValueError(
            f"infer_vector needs epochs >= 0 and finite rates, got epochs={epochs}, "
            f"alpha={alpha}, min_alpha={min_alpha}"
        )
    trainer = inference_trainer(model)
    # the words mapped, the start row from the model's seed and the words, then the training
    row, finite = infer_words(
        trainer, words, model.wv.key_to_index, epochs, alpha, min_alpha,
        _words_seed(words, model.seed),
    )  # fmt: skip
    if not finite:
        from hsw2v.divergence import TrainingDivergedError

        raise TrainingDivergedError(
            f"infer_vector diverged (alpha={alpha}): the new document's vector is not finite; "
            "use a smaller alpha"
        )
    return row
