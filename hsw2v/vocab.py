"""Vocabulary: streaming counts, trimming, ordering and subsampling probabilities.

The rules follow word2vec.c and gensim 4 (Mikolov et al., "Distributed Representations of
Words and Phrases and their Compositionality", 2013, section 2.3 for subsampling):

* counting is one streaming pass over a re-iterable corpus of token lists; with
  ``max_vocab_size`` the raw counts are pruned during the pass (every word below a rising
  threshold is dropped whenever the table grows past the limit);
* words seen fewer than ``min_count`` times are dropped, unless ``trim_rule`` says otherwise;
  ``max_final_vocab`` raises the effective ``min_count`` until the vocabulary fits;
* ``sorted_vocab`` orders words by descending count; equal counts keep first-seen order, so
  the result never depends on ``PYTHONHASHSEED``;
* a token is kept during training with probability
  ``min(1, (sqrt(count / t) + 1) * t / count)``, with ``t = sample * retained_total`` when
  ``0 < sample < 1``, ``t = int(sample * (3 + sqrt(5)) / 2)`` when ``sample >= 1`` (an
  absolute count) and no subsampling when ``sample == 0``. The probability is stored as
  ``uint32(p * (2**32 - 1))`` and compared with a 32-bit random draw.
"""

from __future__ import annotations

import logging
import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import compress

import numpy as np

from hsw2v._kernels._recording import count_ids, finalize_ids

logger = logging.getLogger(__name__)

RULE_DEFAULT = 0
RULE_DISCARD = 1
RULE_KEEP = 2

NULL_WORD = "\0"


def keep_vocab_item(word: str, count: int, min_count: int, trim_rule: Callable | None = None):
    """Whether ``word`` seen ``count`` times survives ``min_count`` (``trim_rule`` may override).

    >>> keep_vocab_item("the", 10, 5)
    True
    >>> keep_vocab_item("rare", 1, 5, trim_rule=lambda w, c, m: RULE_KEEP)
    True
    """
    default = count >= min_count
    if trim_rule is None:
        return default
    rule = trim_rule(word, count, min_count)
    if rule == RULE_KEEP:
        return True
    if rule == RULE_DISCARD:
        return False
    return default


def check_corpus(corpus) -> None:
    """Reject corpora whose shape is clearly wrong, before any work starts.

    A plain string or a sequence of strings would be read as sentences of characters, which
    trains silently on garbage; gensim users meet this often, so say what is expected.

    >>> check_corpus([["hello", "world"]])
    >>> check_corpus("hello world")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    TypeError: the corpus is a single string; expected an iterable of sentences, ...
    """
    if corpus is None:
        raise TypeError("the corpus is None: pass an iterable of sentences (lists of str tokens)")
    if isinstance(corpus, (str, bytes)):
        raise TypeError(
            "the corpus is a single string; expected an iterable of sentences, each a list of "
            "str tokens, e.g. [['hello', 'world'], ...] or LineSentence('corpus.txt')"
        )
    if not isinstance(corpus, Iterable):
        raise TypeError(
            f"the corpus must be an iterable of sentences (lists of str tokens), got "
            f"{type(corpus).__name__}"
        )


def check_sentence(sentence, index: int) -> None:
    """Reject a sentence that is a string (it would be split into characters).

    >>> check_sentence(["hello", "world"], 0)
    >>> check_sentence("hello world", 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    TypeError: sentence #3 is a string ('hello world'); each sentence must be a list of ...
    """
    if isinstance(sentence, (str, bytes)):
        raise TypeError(
            f"sentence #{index} is a string ({sentence[:40]!r}); each sentence must be a list "
            "of str tokens: split your text first, e.g. [line.split() for line in lines], or "
            "use LineSentence"
        )


class UnencodableTokenError(ValueError):
    """A token UTF-8 cannot encode (a lone surrogate); ``token`` holds it."""

    def __init__(self, message: str, token: str):
        super().__init__(message)
        self.token = token


def check_keys(counts: dict, where: str = "the vocabulary holds") -> dict:
    """The one check of every route into a vocabulary (a corpus's counts, or the mapping
    :meth:`hsw2v.Word2Vec.build_vocab_from_freq` takes): every key a ``str`` (a subclass,
    such as ``numpy.str_``, becomes the equal plain ``str``) that UTF-8 can encode, as a
    saved model stores it. Returns ``counts``, or a copy with plain ``str`` keys.

    A key of another type raises TypeError; a key holding a lone surrogate (e.g. text
    decoded with ``errors="surrogateescape"``) raises :class:`UnencodableTokenError` (a
    ValueError naming it): it would train, but no file could ever store it.

    >>> check_keys({"a": 1})
    {'a': 1}
    >>> check_keys({1: 2})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    TypeError: the vocabulary holds a token of type int (1); tokens must be str: ...
    """
    subclassed = False
    for word in counts:
        if type(word) is not str:
            if not isinstance(word, str):
                raise TypeError(
                    f"{where} a token of type {type(word).__name__} ({word!r}); tokens must "
                    "be str: convert them first, e.g. [str(t) for t in sentence]"
                )
            subclassed = True
    if subclassed:  # str subclasses (numpy.str_) count as the equal str; keys become plain str
        counts = {word if type(word) is str else str(word): n for word, n in counts.items()}
    try:
        "".join(counts).encode("utf-8")
    except UnicodeEncodeError:
        for word in counts:
            try:
                word.encode("utf-8")
            except UnicodeEncodeError:
                raise UnencodableTokenError(
                    f"{where} the token {word!r}, which holds a lone surrogate that UTF-8 "
                    "cannot encode, so no model file could store it: decode the text with "
                    "errors='replace' (or 'ignore') rather than 'surrogateescape'",
                    word,
                ) from None
    return counts


def _first_position(corpus, word: str) -> str:
    """Where ``word`` first occurs in ``corpus`` (read again, unless it is a one-shot
    iterator), for an error message."""
    if isinstance(corpus, Iterator):
        return ""
    try:
        for s, sentence in enumerate(corpus):
            for t, token in enumerate(sentence):
                if token == word:
                    return f" (first at sentence #{s}, token #{t})"
    except Exception:  # noqa: BLE001 - only a hint for the message
        pass
    return ""


def prune_counts(counts: dict, min_reduce: int, trim_rule: Callable | None = None) -> int:
    """Drop every word with ``count < min_reduce`` (``trim_rule`` may keep it); return the total
    count removed.

    >>> counts = {"a": 5, "b": 1, "c": 2}
    >>> prune_counts(counts, 2)
    1
    >>> counts
    {'a': 5, 'c': 2}
    """
    removed = 0
    for word in [w for w, c in counts.items() if not keep_vocab_item(w, c, min_reduce, trim_rule)]:
        removed += counts.pop(word)
    return removed


@dataclass
class Pruning:
    """What ``max_vocab_size`` did to the raw counts during a scan: ``times`` the counts
    grew past it and were pruned, the last time of every word seen fewer than ``threshold``
    times since it was last dropped (:func:`prune_counts`)."""

    max_vocab_size: int | None = None
    times: int = 0
    threshold: int = 0

    def emptied(self, min_count: int, n_raw: int) -> str:
        """Why no word passed ``min_count``, for the error that says so: the pruning's part
        when there was one (the counts left are partial: a word dropped by a pruning counts
        from zero when it comes back)."""
        if not self.times:
            return (
                f"no word occurs at least min_count={min_count} times in the corpus ({n_raw} "
                "distinct words seen); lower min_count or give a larger corpus"
            )
        return (
            f"max_vocab_size={self.max_vocab_size} pruned the raw counts {self.times} times "
            f"during the scan (the last time dropping every word seen fewer than "
            f"{self.threshold} times since it was last dropped), and none of the {n_raw} "
            f"words left in the counts reaches min_count={min_count}; raise max_vocab_size above "
            "the number of distinct words (or leave it None), or lower min_count"
        )


class _FirstSeenIndex(dict):
    """word -> provisional id, assigned in first-seen order on first lookup."""

    def __missing__(self, word):
        index = self[word] = len(self)
        return index


@dataclass
class TokenRecording:
    """The corpus as it was scanned, so training can skip reading and tokenising it again.

    After the scan, ``ids`` holds every raw token's provisional id (its word's position in
    the first-seen order of the scan's counts) and ``lengths`` every sentence's raw length.
    :meth:`finalize` then maps the ids to final vocabulary ids *in place*, moving the kept
    tokens to the front and recording each sentence's kept length: the recording is the only
    copy of the corpus ever held, and the jobs training makes from it are views into it.

    >>> recording = scan_counts([["a", "b"], ["b", "c", "a"]], record_tokens=100)[3]
    >>> recording.ids.tolist(), recording.lengths.tolist(), recording.n_keys
    ([0, 1, 1, 2, 0], [2, 3], 3)
    >>> recording.finalize(np.array([1, -1, 0], np.int32), ["c", "a"])  # "b" not kept
    >>> recording.ids[: recording.n_kept].tolist(), recording.kept_lengths.tolist()
    ([1, 0, 1], [1, 2])
    """

    ids: np.ndarray  # int32, one per raw token
    lengths: np.ndarray  # int64, one per sentence
    n_keys: int  # provisional ids are 0 .. n_keys - 1
    kept_lengths: np.ndarray | None = None  # int64, one per sentence, after finalize
    n_kept: int = 0  # after finalize: ids[:n_kept] are the kept tokens' final ids
    vocabulary: list | None = None  # the index_to_key the final ids refer to
    vocabulary_size: int = 0  # its length then

    @property
    def final(self) -> bool:
        return self.kept_lengths is not None

    def finalize(self, to_final: np.ndarray, vocabulary: list) -> None:
        """Map provisional ids through ``to_final`` (int32, -1 for a word not kept) in place
        (:func:`hsw2v._kernels._recording.finalize_ids`: one pass, no temporary copy)."""
        if self.final:
            raise RuntimeError("the recording already holds final ids")
        to_final = np.asarray(to_final, dtype=np.int32)
        if len(to_final) != self.n_keys:
            raise ValueError(f"to_final maps {len(to_final)} ids, the recording has {self.n_keys}")
        kept_lengths = np.empty(len(self.lengths), np.int64)
        self.n_kept = finalize_ids(self.ids, to_final, self.lengths, kept_lengths)
        self.kept_lengths = kept_lengths
        self.vocabulary = vocabulary
        self.vocabulary_size = len(vocabulary)

    def matches(self, index_to_key: list) -> bool:
        """Whether the final ids refer to this vocabulary (the same list, not grown since)."""
        return (
            self.final
            and self.vocabulary is index_to_key
            and self.vocabulary_size == len(index_to_key)
        )


def scan_counts(
    corpus,
    max_vocab_size: int | None = None,
    trim_rule: Callable | None = None,
    progress_per: int = 10000,
    record_tokens: int = 0,
    pruning: Pruning | None = None,
):
    """Count tokens in one streaming pass.

    Returns ``(raw_counts, total_words, corpus_count, recording)``: ``raw_counts`` maps each
    word to its count in first-seen order; ``total_words`` counts every token seen (pruned
    ones included); ``corpus_count`` is the number of sentences. With ``record_tokens > 0``
    (and no ``max_vocab_size``), ``recording`` is a :class:`TokenRecording` of the corpus
    while it has at most that many tokens; else None. ``pruning``, when given, records what
    ``max_vocab_size`` pruned (:class:`Pruning`).

    >>> counts, total_words, corpus_count, recording = scan_counts([["a", "b", "a"], ["c", "a"]])
    >>> counts, total_words, corpus_count, recording is None
    ({'a': 3, 'b': 1, 'c': 1}, 5, 2, True)
    """
    check_corpus(corpus)
    counts: Counter = Counter()
    index = _FirstSeenIndex()
    ids = array("i")
    lengths = array("q")
    recording = record_tokens > 0 and not max_vocab_size
    total_words = 0
    n_sentences = 0
    min_reduce = 1
    for n_sentences, sentence in enumerate(corpus, start=1):  # noqa: B007
        if n_sentences <= 1000 or isinstance(sentence, (str, bytes)):
            check_sentence(sentence, n_sentences - 1)
        if progress_per and n_sentences % progress_per == 0:
            logger.debug(
                "PROGRESS: at sentence #%i, processed %i words",
                n_sentences,
                total_words,
            )
        total_words += len(sentence)
        if recording:
            ids.extend(map(index.__getitem__, sentence))
            lengths.append(len(sentence))
            if total_words > record_tokens:  # too large to keep: count the plain way
                recording = False
                counts = Counter(_counts_of(index, ids))
                ids, lengths = array("i"), array("q")
            continue
        counts.update(sentence)
        if max_vocab_size and len(counts) > max_vocab_size:
            prune_counts(counts, min_reduce, trim_rule)
            if pruning is not None:
                pruning.max_vocab_size, pruning.times = max_vocab_size, pruning.times + 1
                pruning.threshold = min_reduce
            min_reduce += 1
    if recording:
        counts = _counts_of(index, ids)
    try:
        counts = check_keys(counts, "the corpus contains")
    except UnencodableTokenError as exc:  # a lone surrogate: say where it first occurs
        raise UnencodableTokenError(
            f"{exc}{_first_position(corpus, exc.token)}", exc.token
        ) from None
    logger.info(
        "collected %i word types from a corpus of %i raw words and %i sentences",
        len(counts),
        total_words,
        n_sentences,
    )
    stream = None
    if recording:
        stream = TokenRecording(
            # views of the scan's own buffers, not copies
            ids=np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, np.int32),
            lengths=np.frombuffer(lengths, dtype=np.int64)
            if len(lengths)
            else np.zeros(0, np.int64),
            n_keys=len(counts),
        )
    return counts if type(counts) is dict else dict(counts), total_words, n_sentences, stream


def _counts_of(index: dict, ids: array) -> dict:
    """Counts of the recorded provisional ids, keyed by word in first-seen order (one new
    dict; ``index`` is emptied so the two never coexist for long)."""
    tally = count_ids(np.frombuffer(ids, dtype=np.int32), len(index))  # no int64 copy of ids
    counts = dict(zip(index, tally.tolist(), strict=True))
    index.clear()
    return counts


@dataclass
class Vocabulary:
    """The final vocabulary: keys in training order and per-word arrays aligned with them.

    >>> vocab = build_vocabulary({"a": 3, "b": 7, "c": 1}, min_count=2, sample=0)
    >>> isinstance(vocab, Vocabulary), vocab.index_to_key, vocab.counts.tolist()
    (True, ['b', 'a'], [7, 3])
    >>> vocab.effective_min_count, vocab.retained_total, vocab.dropped_total
    (2, 10, 1)
    """

    index_to_key: list
    counts: np.ndarray  # int64, one per word
    sample_int: np.ndarray  # uint32 keep probability, see module docstring
    effective_min_count: int
    retained_total: int
    dropped_total: int
    downsampled_total: float


def keep_probabilities(counts: np.ndarray, sample: float) -> tuple[np.ndarray, float]:
    """Per-word keep probability of subsampling as uint32 thresholds, and the expected total
    number of tokens left after subsampling.

    >>> sample_int, kept = keep_probabilities([1000, 10], sample=0)  # no subsampling
    >>> sample_int.tolist(), kept
    ([4294967295, 4294967295], 1010.0)
    >>> sample_int, kept = keep_probabilities([1000, 10], sample=0.01)
    >>> (sample_int / (2**32 - 1)).round(3).tolist(), round(kept, 1)
    ([0.111, 1.0], 120.6)
    """
    counts = np.asarray(counts, dtype=np.float64)
    retain_total = float(counts.sum())
    if sample < 0:
        raise ValueError(f"sample must be >= 0, got {sample}")
    if not sample:
        threshold = retain_total
    elif sample < 1.0:
        threshold = sample * retain_total
    else:
        threshold = float(int(sample * (3 + math.sqrt(5)) / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        prob = (np.sqrt(counts / threshold) + 1.0) * (threshold / counts)
    prob = np.where(counts > 0, np.minimum(prob, 1.0), 1.0)
    if not sample:
        prob[:] = 1.0
    sample_int = np.floor(prob * (2**32 - 1)).astype(np.uint32)
    return sample_int, float((prob * counts).sum())


def _kept(raw_counts: dict, min_count: int, trim_rule: Callable | None) -> tuple:
    """``(keys, counts, dropped)``: the words :func:`keep_vocab_item` keeps, in the counts'
    order, their counts (int64) and the sum of the other counts. Without a ``trim_rule`` the
    test runs on all counts at once (NumPy's comparison of ints and floats is Python's)."""
    values = np.asarray(list(raw_counts.values())) if trim_rule is None and raw_counts else None
    if values is None or values.dtype.kind not in "if":  # a rule, or counts NumPy cannot hold
        keys, kept_counts, dropped = [], [], 0
        for word, count in raw_counts.items():
            if keep_vocab_item(word, count, min_count, trim_rule):
                keys.append(word)
                kept_counts.append(count)
            else:
                dropped += count
        return keys, np.asarray(kept_counts, dtype=np.int64), dropped
    keep = values >= min_count
    keys = list(compress(raw_counts, keep.tolist()))
    return keys, values[keep].astype(np.int64), values[~keep].sum().item()


def build_vocabulary(
    raw_counts: dict,
    min_count: int = 5,
    sample: float = 1e-3,
    max_final_vocab: int | None = None,
    trim_rule: Callable | None = None,
    sorted_vocab: bool = True,
    null_word: bool = False,
) -> Vocabulary:
    """Apply ``min_count``/``max_final_vocab``/``trim_rule``, order and compute subsampling.

    >>> v = build_vocabulary({"a": 3, "b": 7, "c": 1}, min_count=2, sample=0)
    >>> v.index_to_key, v.counts.tolist()
    (['b', 'a'], [7, 3])
    """
    effective_min_count = min_count
    if max_final_vocab is not None and max_final_vocab < len(raw_counts):
        by_count = sorted(raw_counts.values(), reverse=True)
        effective_min_count = max(min_count, by_count[max_final_vocab] + 1)
    keys, counts, dropped = _kept(raw_counts, effective_min_count, trim_rule)
    if sorted_vocab and len(keys):
        order = np.argsort(-counts, kind="stable")
        keys = [keys[i] for i in order.tolist()]
        counts = counts[order]
    sample_int, downsampled_total = keep_probabilities(counts, sample)
    if null_word and NULL_WORD not in keys:  # the corpus may hold the token itself
        keys.append(NULL_WORD)
        counts = np.append(counts, 1)
        sample_int = np.append(sample_int, np.uint32(0))
    return Vocabulary(
        index_to_key=keys,
        counts=counts,
        sample_int=sample_int,
        effective_min_count=effective_min_count,
        retained_total=int(counts.sum()),
        dropped_total=dropped,
        downsampled_total=downsampled_total,
    )
