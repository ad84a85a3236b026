"""Facebook fastText's ``.bin`` files as hsw2v models: gensim 4.4's ``load_facebook_model``,
``load_facebook_vectors`` and ``save_facebook_model``.

:mod:`hsw2v.fasttext._facebook` reads and writes the bytes; this module maps them onto a
trainable :class:`~hsw2v.fasttext.FastText` and back.

==========================  ==============================================================
fastText (``Args``)         hsw2v / gensim
==========================  ==============================================================
dim, ws, epoch              ``vector_size``, ``window``, ``epochs``
minCount, t                 ``min_count``, ``sample``
minn, maxn, bucket          ``min_n``, ``max_n``, ``bucket``
model skipgram / cbow       ``sg=1`` / ``sg=0``
loss hs                     ``hs=1, negative=0`` (gensim also sets ``negative=neg``, with
                            ``syn1neg`` the same array as ``syn1``)
loss ns, neg                ``hs=0, negative=neg``
lr                          not in the file: ``alpha`` is gensim's default (0.025)
ntokens                     ``corpus_total_words`` (as gensim)
count of ``</s>``           ``corpus_count``: fastText counts one ``</s>`` per line read
input matrix                ``wv.input_matrix`` (the ``V`` word rows, then ``bucket``)
output matrix, hs           ``syn1 = -output``, tree ``facebook_hs_tree(counts)``
output matrix, ns           ``syn1neg = output``; ``cum_table`` from the counts
==========================  ==============================================================

The output layer of ``-loss hs``. fastText builds its tree from the dictionary's counts in
file order (:func:`~hsw2v.fasttext._facebook_tree.facebook_hs_tree`); for counts in descending
order (the order fastText and hsw2v both write) it is hsw2v's Huffman tree, node for node,
so the loaded model keeps hsw2v's tree and trains on. fastText trains
``sigmoid(output[node] . h)`` as the probability that the code bit is 1, hsw2v (word2vec.c,
gensim) ``sigmoid(syn1[node] . h)`` as the probability that it is 0: the rows are negated
both ways. fastText's hs output matrix has ``V`` rows, of which the tree uses ``V - 1``;
hsw2v's ``syn1`` keeps ``V`` rows too, so all of them are carried over.

Saving with ``-loss hs`` needs the model's tree to be the one fastText will rebuild from the
counts when it loads the file; a tree that is not (``tree="balanced"``, a vocabulary grown
by ``build_vocab(update=True)``, words not in descending count order) is refused with a
ValueError: fastText would pair the rows with other paths and compute other probabilities.
Negative sampling has no such constraint. A model training both objectives is saved with
``-loss hs`` (as gensim does; fastText has one loss), and a warning says ``syn1neg`` is left
out.

Not as gensim: ``hs`` and ``negative`` follow the file's loss alone (above); the vector of
``</s>`` is its row averaged with its n-gram rows, as gensim (fastText gives ``</s>`` no
n-grams, so ``fasttext``'s ``get_word_vector("</s>")`` is its row alone); supervised models
(labels) and losses other than hs and ns are refused by :func:`load_facebook_model`.

Example
-------
>>> import os, tempfile
>>> from hsw2v.fasttext import FastText
>>> model = FastText([["the", "cat", "sat"]] * 30, vector_size=4, min_count=1, bucket=100,
...                  workers=1, epochs=1)
>>> path = os.path.join(tempfile.mkdtemp(), "model.bin")
>>> save_facebook_model(model, path)
>>> loaded = load_facebook_model(path)
>>> loaded.wv.index_to_key == model.wv.index_to_key
True
>>> bool((loaded.wv["cats"] == model.wv["cats"]).all())  # a word outside the vocabulary
True
"""

from __future__ import annotations

import codecs
import logging

import numpy as np

from hsw2v.fasttext._facebook import FacebookModel, read_facebook_bin, write_facebook_bin
from hsw2v.fasttext._facebook_tree import facebook_hs_tree
from hsw2v.fasttext._keyedvectors import FastTextKeyedVectors
from hsw2v.fasttext._model import FastText
from hsw2v.huffman import Tree
from hsw2v.running.objectives import rebuild_lookups, reset_matrices
from hsw2v.vocab import Vocabulary, keep_probabilities

__all__ = ["load_facebook_model", "load_facebook_vectors", "save_facebook_model"]

logger = logging.getLogger(__name__)

# The fastText ``Args`` that are one FastText setting under another name (the table above):
# fastText's name, hsw2v's (gensim's), whether a model keeps it itself or on its ``wv``, and the
# type a .bin file stores. Loading reads them one way, saving the other.
SAME_ARGS = (
    ("dim", "vector_size", "model", int),
    ("ws", "window", "model", int),
    ("epoch", "epochs", "model", int),
    ("minCount", "min_count", "model", int),
    ("t", "sample", "model", float),
    ("minn", "min_n", "wv", int),
    ("maxn", "max_n", "wv", int),
    ("bucket", "bucket", "wv", int),
)

EOS = "</s>"  # fastText's end-of-line token: one per line read
FASTTEXT_NEGATIVE = 5  # fastText's default -neg, written for hs models (unused by hs)


# ------------------------------------------------------------------------------ reading
def _is_utf8(encoding: str) -> bool:
    return codecs.lookup(encoding).name == "utf-8"


def _read(path, encoding: str, full_model: bool) -> FacebookModel:
    """The file, its words decoded with ``encoding`` (invalid bytes backslash-escaped, as
    gensim decodes them)."""
    if _is_utf8(encoding):
        return read_facebook_bin(path, full_model=full_model)
    fb = read_facebook_bin(path, full_model=full_model, unicode_errors="surrogateescape")
    fb.words = [
        w.encode("utf-8", "surrogateescape").decode(encoding, "backslashreplace") for w in fb.words
    ]
    if len(set(fb.words)) != len(fb.words):
        raise ValueError(f"{path!r}: two words decode to the same string as {encoding}")
    return fb


def _input_rows(fb: FacebookModel, bucket: int) -> np.ndarray:
    """The file's input matrix as the C-contiguous, writable float32 array the trainer
    updates in place: the word rows and ``bucket`` n-gram rows."""
    matrix = fb.input_matrix[: fb.nwords + bucket]
    whole = len(matrix) == len(fb.input_matrix)  # else copy, not to keep the unused rows
    if not (whole and matrix.flags.c_contiguous and matrix.flags.writeable):
        matrix = np.array(matrix, dtype=np.float32, order="C")
    return matrix


def _install_input(wv: FastTextKeyedVectors, matrix: np.ndarray) -> None:
    """Make ``matrix`` (word rows, then ``wv.bucket`` n-gram rows) ``wv``'s input matrix,
    without copying it, and compose ``wv.vectors`` from it."""
    wv.input_matrix = matrix
    wv._vocab_rows, wv._ngrams_allocated = len(wv.index_to_key), True
    wv.norms = None
    wv.recalc_char_ngram_buckets()
    wv.adjust_vectors()


def _tree_for(counts: np.ndarray, tree: Tree) -> Tree:
    """fastText's hs tree over ``counts`` (file order), as a :class:`Tree`: ``tree``,
    hsw2v's own Huffman tree over them, when the two agree (always, for counts in descending
    order: the order fastText writes)."""
    codes, points, lengths = facebook_hs_tree(counts)
    if len(counts) == 1 or _same_tree(tree, codes, points, lengths):
        return tree
    logger.info("the counts are not in descending order: keeping fastText's tree over them")
    return Tree(codes=codes, points=points, lengths=lengths)


def _same_tree(tree: Tree, codes, points, lengths) -> bool:
    if tree is None or tree.lengths.shape != lengths.shape:
        return False
    if not np.array_equal(np.asarray(tree.lengths), lengths):
        return False
    width = codes.shape[1]
    if tree.codes.shape[1] < width:
        return False
    mask = np.arange(width)[None, :] < lengths[:, None]
    return bool(
        np.array_equal(np.where(mask, tree.codes[:, :width], 0), np.where(mask, codes, 0))
        and np.array_equal(np.where(mask, tree.points[:, :width], 0), np.where(mask, points, 0))
    )


def load_facebook_model(path, encoding="utf-8"):
    """Load a model trained by Facebook's fastText (its ``.bin`` file) as a trainable
    :class:`~hsw2v.fasttext.FastText`: gensim 4.4's ``load_facebook_model``.

    The settings, the vocabulary (fastText's order and counts), the input matrix and the
    output layer come from the file (the mapping is in the module docstring); training
    continues with ``build_vocab(more, update=True)`` and ``train(more, ...)``.

    Parameters
    ----------
    path : str or os.PathLike or binary file object
        The ``.bin`` file (``.ftz`` quantized models are refused: use the ``.bin``).
    encoding : str, optional
        The words' encoding; bytes that do not decode are backslash-escaped (as gensim).

    Returns
    -------
    FastText

    Raises
    ------
    ValueError
        The file is damaged or not fastText's (:class:`~hsw2v.exceptions.FacebookFormatError`),
        is a supervised model, or was trained with a loss hsw2v cannot train (softmax).

    Examples
    --------
    >>> import os, tempfile
    >>> from hsw2v.fasttext import FastText
    >>> model = FastText([["a", "b", "a"]] * 20, vector_size=4, min_count=1, bucket=50,
    ...                  workers=1, epochs=1, sg=1)
    >>> path = os.path.join(tempfile.mkdtemp(), "m.bin"); save_facebook_model(model, path)
    >>> loaded = load_facebook_model(path)
    >>> loaded.sg, loaded.hs, loaded.negative, bool((loaded.syn1 == model.syn1).all())
    (1, 1, 0, True)
    """
    fb = _read(path, encoding, full_model=True)
    where = getattr(path, "name", path)
    if fb.model == "supervised" or fb.nlabels:
        raise ValueError(
            f"{where!r}: a supervised fastText model (labels, -supervised): its output layer "
            "scores labels, not words, so it is not a FastText word model; use "
            "load_facebook_vectors() for its input vectors"
        )
    if fb.loss not in ("hs", "ns"):
        raise ValueError(
            f"{where!r}: trained with -loss {fb.loss}, which hsw2v cannot train (hs and ns "
            "only); use load_facebook_vectors() for its vectors"
        )
    if fb.loss == "ns" and fb.neg < 1:
        raise ValueError(f"{where!r}: -loss ns with neg={fb.neg} negative samples")
    hs = int(fb.loss == "hs")
    model = FastText(
        **{ours: getattr(fb, theirs) for theirs, ours, _, _ in SAME_ARGS},
        sg=int(fb.model == "skipgram"),
        hs=hs,
        negative=0 if hs else fb.neg,
    )
    words = fb.words[: fb.nwords]
    counts = np.asarray(fb.counts[: fb.nwords], dtype=np.int64)
    sample_int, downsampled = keep_probabilities(counts, model.sample)
    vocab = Vocabulary(
        index_to_key=list(words),
        counts=counts,
        sample_int=sample_int,
        effective_min_count=model.min_count,
        retained_total=int(counts.sum()),
        dropped_total=0,
        downsampled_total=downsampled,
    )
    model._install_vocabulary(vocab)  # keys, count, sample_int and hsw2v's tree
    if hs:
        model._install_tree(_tree_for(counts, model.tree))  # fastText's: hsw2v's, if sorted
    _install_input(model.wv, _input_rows(fb, model.bucket))  # bucket 0 if maxn < minn
    reset_matrices(model, len(words))  # syn1 or syn1neg of the right shape, then the file's
    output = np.asarray(fb.output_matrix, dtype=np.float32)
    if hs:
        model.syn1 = np.negative(output, order="C")  # P(bit 1) rows -> P(bit 0) rows
    else:
        model.syn1neg = np.array(output, dtype=np.float32, order="C")
    rebuild_lookups(model)  # cum_table from the counts
    model._weights_changed()
    model.corpus_total_words = int(fb.ntokens)
    eos = model.wv.key_to_index.get(EOS)
    model.corpus_count = int(counts[eos]) if eos is not None else 0
    return model


def load_facebook_vectors(path, encoding="utf-8"):
    """Load the word and n-gram vectors of a fastText ``.bin`` file as a
    :class:`~hsw2v.fasttext.FastTextKeyedVectors`, without its output layer: gensim 4.4's
    ``load_facebook_vectors``. Any fastText model's file is read (supervised ones too:
    their words' vectors).

    Parameters
    ----------
    path : str or os.PathLike or binary file object
        The ``.bin`` file.
    encoding : str, optional
        The words' encoding; bytes that do not decode are backslash-escaped.

    Returns
    -------
    FastTextKeyedVectors
        ``kv[word]`` for any word: a vocabulary word's composed vector, or for another the
        mean of its n-gram rows; ``count`` and ``sample_int`` per word, as gensim.

    Examples
    --------
    >>> import os, tempfile
    >>> from hsw2v.fasttext import FastText
    >>> path = os.path.join(tempfile.mkdtemp(), "m.bin")
    >>> model = FastText([["a", "b", "a"]] * 20, sg=1, vector_size=4, min_count=1, bucket=50, workers=1)
    >>> save_facebook_model(model, path); kv = load_facebook_vectors(path)
    >>> kv.index_to_key, bool((kv["abc"] == model.wv["abc"]).all())
    (['a', 'b'], True)
    """
    fb = _read(path, encoding, full_model=False)
    bucket = fb.bucket if fb.maxn >= fb.minn else 0  # FastText's rule: no n-grams, no buckets
    wv = FastTextKeyedVectors(fb.dim, fb.minn, fb.maxn, bucket)
    words = fb.words[: fb.nwords]
    counts = np.asarray(fb.counts[: fb.nwords], dtype=np.int64)
    wv.index_to_key = list(words)
    wv.key_to_index = {word: i for i, word in enumerate(words)}
    wv.next_index = len(words)
    wv.expandos = {"count": counts, "sample_int": keep_probabilities(counts, fb.t)[0]}
    _install_input(wv, _input_rows(fb, bucket))
    return wv


# ------------------------------------------------------------------------------ writing
def _hs_output(model) -> np.ndarray:
    """``-syn1``: fastText's hs output rows, after checking that the tree fastText rebuilds
    from the counts is the model's own."""
    counts = np.asarray(model.wv.expandos["count"], dtype=np.int64)
    codes, points, lengths = facebook_hs_tree(counts)
    if len(counts) > 1 and not _same_tree(model.tree, codes, points, lengths):
        why = (
            f'its tree is tree="{model.tree_type}"'
            if model.tree_type != "huffman"
            else "its words are not in descending count order or its tree was grown by "
            "build_vocab(update=True)"
        )
        raise ValueError(
            "cannot save this hierarchical-softmax model as a fastText file: fastText "
            "rebuilds its tree from the counts, in the file's order, when it loads a model, "
            f"and that tree is not this model's ({why}), so fastText would pair the rows of "
            "syn1 with other paths. Save a negative-sampling model, or retrain with "
            'tree="huffman" and a sorted vocabulary'
        )
    syn1 = np.asarray(model.syn1)
    if syn1.shape[0] != len(counts):
        raise ValueError(f"syn1 has {syn1.shape[0]} rows, expected one per word ({len(counts)})")
    return np.negative(syn1, dtype=np.float32)  # P(bit 0) rows -> fastText's P(bit 1)


def _encoded_words(words: list, encoding: str) -> list:
    """The words as the writer stores them (UTF-8, surrogate escapes kept as bytes), so that
    the file holds them in ``encoding``."""
    if _is_utf8(encoding):
        return list(words)
    return [w.encode(encoding).decode("utf-8", "surrogateescape") for w in words]


def save_facebook_model(model, path, encoding="utf-8", lr_update_rate=100, word_ngrams=1):
    """Save a :class:`~hsw2v.fasttext.FastText` as a fastText ``.bin`` file, which fastText's
    ``load_model`` (and gensim's ``load_facebook_model``) load: gensim 4.4's
    ``save_facebook_model``.

    The file holds the settings (``-loss hs`` when ``hs`` is on, else ``-loss ns``; ``neg``
    is fastText's default 5 for an hs-only model, where fastText does not use it), the
    vocabulary with its counts, ``corpus_total_words`` as ``ntokens``, the input matrix, and
    the output layer in fastText's convention: ``-syn1`` for hs, ``syn1neg`` for ns. It is
    written to a temporary file and renamed into place.

    Parameters
    ----------
    model : FastText
        A model with a vocabulary.
    path : str or os.PathLike
        Where to write (conventionally ``*.bin``).
    encoding : str, optional
        The encoding of the words in the file.
    lr_update_rate, word_ngrams : int, optional
        Written as fastText's ``lrUpdateRate`` and ``wordNgrams`` (unused by hsw2v).

    Raises
    ------
    ValueError
        ``hs`` is on and the model's tree is not the one fastText rebuilds from the counts
        (``tree="balanced"``, a vocabulary grown with ``build_vocab(update=True)``, a
        vocabulary not sorted by descending count).
    TypeError
        ``model`` is not a FastText model.

    Examples
    --------
    >>> import os, tempfile
    >>> from hsw2v.fasttext import FastText
    >>> model = FastText([["a", "b", "a"]] * 20, vector_size=4, min_count=1, bucket=50,
    ...                  workers=1, epochs=1)
    >>> path = os.path.join(tempfile.mkdtemp(), "m.bin"); save_facebook_model(model, path)
    >>> from hsw2v.fasttext._facebook import read_facebook_bin
    >>> fb = read_facebook_bin(path); fb.loss, fb.model, fb.words
    ('hs', 'cbow', ['a', 'b'])
    """
    wv = getattr(model, "wv", None)
    if not isinstance(model, FastText) or not isinstance(wv, FastTextKeyedVectors):
        raise TypeError(f"expected an hsw2v FastText model, got {type(model).__name__}")
    n = len(wv.index_to_key)
    if model.tree is None or not n or wv.vectors_ngrams is None:
        raise ValueError("nothing to save: build the vocabulary first (build_vocab or train)")
    if model.hs:
        if model.negative:
            logger.warning(
                "a fastText model has one loss: saving -loss hs, without syn1neg (negative "
                "sampling's output layer)"
            )
        loss, neg, output = "hs", model.negative or FASTTEXT_NEGATIVE, _hs_output(model)
    else:
        loss, neg, output = "ns", model.negative, np.asarray(model.syn1neg, dtype=np.float32)
    fb = FacebookModel(
        **{
            theirs: kind(getattr(wv if owner == "wv" else model, ours))
            for theirs, ours, owner, kind in SAME_ARGS
        },
        neg=int(neg),
        wordNgrams=int(word_ngrams),
        loss=loss,
        model="skipgram" if model.sg else "cbow",
        lrUpdateRate=int(lr_update_rate),
        words=_encoded_words(wv.index_to_key, encoding),
        counts=np.asarray(wv.expandos["count"], dtype=np.int64),
        entry_types=np.zeros(n, dtype=np.int8),
        ntokens=int(model.corpus_total_words),
        nwords=n,
        nlabels=0,
        input_matrix=np.asarray(wv.input_matrix, dtype=np.float32),
        output_matrix=output,
    )
    write_facebook_bin(path, fb)
