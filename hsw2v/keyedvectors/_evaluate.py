"""Word-analogy and word-similarity benchmarks: KeyedVectors.evaluate_* (the
:class:`Evaluations` mixin of :class:`hsw2v.KeyedVectors`) and the work behind them.

The file formats are those of the original word2vec distribution (``questions-words.txt``:
``": section"`` headers and ``a b c expected`` lines) and of WordSim-353 style lists
(``word1<TAB>word2<TAB>score``, ``#`` comments). Scores match gensim 4.4's for the same vectors.
"""

from __future__ import annotations

import codecs
import itertools
import logging
import os

import numpy as np

from hsw2v.corpora import CorpusDecodeError, open_source
from hsw2v.keyedvectors._vecmath import unitvec

logger = logging.getLogger(__name__)

_SIMILARITY_FUNCTIONS = ("most_similar", "most_similar_cosmul")


def _decoded(fin, path, encoding: str, binary: bool):
    """``(line index, text)`` of each line of ``fin`` (a binary file: decoded here, or a
    text file of that ``encoding``); bytes that are not ``encoding`` raise
    :class:`hsw2v.corpora.CorpusDecodeError` (a ValueError and a UnicodeDecodeError) naming
    the file, the line (a text file decodes ahead: the line or one after it) and what to do."""
    lines = iter(fin)
    line_no = 0
    while True:
        try:
            raw = next(lines)
            yield line_no, raw.decode(encoding) if isinstance(raw, bytes) else raw
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            where = f"line {line_no + 1}" + ("" if binary else " or soon after")
            raise CorpusDecodeError(
                f"{os.fspath(path)!r}: {where} is not {encoding} ({exc.reason}): convert "
                f"the file to {encoding} first (or give its encoding)",
                exc,
            ) from None
        line_no += 1


def _ok_vocab(kv, restrict_vocab, case_insensitive):
    """Map each allowed word (upper-cased if asked; the first occurrence wins) to its row."""
    ok_keys = kv.index_to_key[:restrict_vocab]
    if case_insensitive:
        return {k.upper(): kv.get_index(k) for k in reversed(ok_keys)}
    return {k: kv.get_index(k) for k in reversed(ok_keys)}


def _section_score(section):
    correct, incorrect = len(section["correct"]), len(section["incorrect"])
    if correct + incorrect == 0:
        return 0.0
    score = correct / (correct + incorrect)
    logger.info(
        "%s: %.1f%% (%i/%i)", section["section"], 100.0 * score, correct, correct + incorrect
    )
    return score


def _answers(kv, rows, restrict_vocab, similarity_function):
    """The 5 best ``(key, score)`` for ``b - a + c``; `rows` are the rows of a, b, c."""
    row_a, row_b, row_c = rows
    normed = [kv.vectors[r] / kv.norms[r] for r in (row_b, row_c, row_a)]
    if similarity_function == "most_similar_cosmul":
        sims = kv.most_similar_cosmul(
            normed[:2], [normed[2]], topn=8, restrict_vocab=restrict_vocab
        )
        return [(k, s) for k, s in sims if kv.get_index(k) not in rows][:5]
    weights = np.array([1.0, 1.0, -1.0])
    mean = kv.get_mean_vector(normed, weights, post_normalize=True)
    end = restrict_vocab or len(kv.vectors)
    dists = np.dot(kv.vectors[:end], mean) / kv.norms[:end]
    return kv._best(dists, 5, [row_b, row_c, row_a])


def word_analogies(kv, analogies, restrict_vocab, case_insensitive, dummy4unknown, function):
    """See :meth:`hsw2v.keyedvectors.KeyedVectors.evaluate_word_analogies`.

    >>> import os, tempfile
    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> path = os.path.join(tempfile.mkdtemp(), "q.txt")
    >>> _ = open(path, "w").write(": s\\na b c d\\n")
    >>> kv = KeyedVectors(2); kv.add_vectors(list("abcd"), [[1, 0], [1, 1], [3, 0], [3, 1]])
    >>> word_analogies(kv, path, 300000, True, False, "most_similar")[0]
    1.0
    """
    if function not in _SIMILARITY_FUNCTIONS:
        raise ValueError(f"similarity_function must be one of {_SIMILARITY_FUNCTIONS}")
    ok_vocab = _ok_vocab(kv, restrict_vocab, case_insensitive)
    kv.fill_norms()
    logger.info(
        "Evaluating word analogies for top %s words in the model on %s", restrict_vocab, analogies
    )
    sections, section, oov, questions = [], None, 0, 0
    with open_source(analogies, "rb") as fin:
        for line_no, line in _decoded(fin, analogies, "utf8", binary=True):
            if line.startswith(": "):
                if section:
                    sections.append(section)
                    _section_score(section)
                section = {"section": line.lstrip(": ").strip(), "correct": [], "incorrect": []}
                continue
            if not section:
                raise ValueError(f"Missing section header before line #{line_no} in {analogies}")
            words = [w.upper() for w in line.split()] if case_insensitive else line.split()
            if len(words) != 4:
                logger.info("Skipping invalid line #%i in %s", line_no, analogies)
                continue
            a, b, c, expected = question = tuple(words)
            questions += 1
            if any(w not in ok_vocab for w in question):
                oov += 1
                if dummy4unknown:
                    section["incorrect"].append(question)
                continue
            sims = _answers(kv, (ok_vocab[a], ok_vocab[b], ok_vocab[c]), restrict_vocab, function)
            predicted = None
            for key, _ in sims:
                predicted = key.upper() if case_insensitive else key
                if predicted in ok_vocab and predicted not in {a, b, c}:
                    break
            section["correct" if predicted == expected else "incorrect"].append(question)
    if section:
        sections.append(section)
        _section_score(section)
    total = {
        "section": "Total accuracy",
        "correct": list(itertools.chain.from_iterable(s["correct"] for s in sections)),
        "incorrect": list(itertools.chain.from_iterable(s["incorrect"] for s in sections)),
    }
    if questions:
        logger.info("Quadruplets with out-of-vocabulary words: %.1f%%", 100.0 * oov / questions)
    score = _section_score(total)
    sections.append(total)
    return score, sections


def word_pairs(kv, pairs, delimiter, encoding, restrict_vocab, case_insensitive, dummy4unknown):
    """See :meth:`hsw2v.keyedvectors.KeyedVectors.evaluate_word_pairs`.

    >>> import os, tempfile
    >>> from hsw2v.keyedvectors import KeyedVectors
    >>> path = os.path.join(tempfile.mkdtemp(), "p.tsv")
    >>> _ = open(path, "w").write("a\\tb\\t9\\na\\tc\\t1\\nb\\tc\\t2\\n")
    >>> kv = KeyedVectors(2); kv.add_vectors(list("abc"), [[1, 0], [1, 0.1], [0, 1]])
    >>> float(word_pairs(kv, path, "\\t", "utf8", 300000, True, False)[1][0])
    1.0
    """
    ok_vocab = _ok_vocab(kv, restrict_vocab, case_insensitive)
    gold, model, oov = [], [], 0
    # lines split as bytes (so a decode error names its line) where the encoding keeps
    # b"\n" as the newline; UTF-16 and UTF-32 files are read as text
    binary = not any(w in codecs.lookup(encoding).name for w in ("16", "32"))
    with open_source(pairs, "rb" if binary else "r", encoding=None if binary else encoding) as fin:
        for line_no, line in _decoded(fin, pairs, encoding, binary=binary):
            if not line or line.startswith("#"):
                continue
            try:
                fields = line.split(delimiter)
                a, b, sim = [w.upper() for w in fields] if case_insensitive else fields
                sim = float(sim)
            except (ValueError, TypeError):
                logger.info("Skipping invalid line #%d in %s", line_no, pairs)
                continue
            if a not in ok_vocab or b not in ok_vocab:
                oov += 1
                if dummy4unknown:
                    model.append(0.0)
                    gold.append(sim)
                continue
            gold.append(sim)
            model.append(np.dot(unitvec(kv.vectors[ok_vocab[a]]), unitvec(kv.vectors[ok_vocab[b]])))
    if not gold:
        raise ValueError(
            f"No valid similarity judgements found in {pairs}: either invalid format or "
            f"all are out-of-vocabulary in {kv}"
        )
    from scipy import stats  # imported here: scipy.stats takes ~1 s and ~45 MB to import

    spearman = stats.spearmanr(gold, model)
    pearson = stats.pearsonr(gold, model)
    oov_ratio = 100.0 * oov / (len(gold) if dummy4unknown else len(gold) + oov)
    logger.info("Pearson correlation coefficient against %s: %.4f", pairs, pearson[0])
    logger.info("Spearman rank-order correlation coefficient against %s: %.4f", pairs, spearman[0])
    logger.info("Pairs with unknown words ratio: %.1f%%", oov_ratio)
    return pearson, spearman, oov_ratio


class Evaluations:
    """The benchmarks of :class:`hsw2v.KeyedVectors` (mixed into it)."""

    def evaluate_word_analogies(
        self,
        analogies,
        restrict_vocab=300000,
        case_insensitive=True,
        dummy4unknown=False,
        similarity_function="most_similar",
    ):
        """Accuracy on an analogy file of ``": section"`` lines and ``a b c expected`` lines.

        Each question is answered with the best of ``most_similar([b, c], [a])`` over the first
        `restrict_vocab` keys (or ``most_similar_cosmul`` if `similarity_function` says so).
        Questions with a word outside those keys are skipped, or counted wrong if
        `dummy4unknown`.

        Parameters
        ----------
        analogies : str or os.PathLike
            The question file (word2vec's ``questions-words.txt`` format).
        restrict_vocab : int, optional
            Only the first (most frequent) this many keys are questions' words and answers.
        case_insensitive : bool, optional
            Upper-case the file's words and the keys before comparing them, as gensim does.
        dummy4unknown : bool, optional
            Count questions with an unknown word as wrong instead of skipping them.
        similarity_function : str, optional
            ``"most_similar"`` or ``"most_similar_cosmul"``.

        Returns
        -------
        score : float
            Correct answers over the questions counted.
        sections : list of dict
            Per section, ``"section"``, ``"correct"`` and ``"incorrect"`` (lists of
            questions); the last one is the total.

        Examples
        --------
        >>> import os, tempfile
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> path = os.path.join(tempfile.mkdtemp(), "analogies.txt")
        >>> _ = open(path, "w").write(": family\\nman king woman queen\\nman king boy prince\\n")
        >>> kv = KeyedVectors(2)
        >>> kv.add_vectors(["man", "woman", "king", "queen"], [[1, 0], [1, 1], [3, 0], [3, 1]])
        >>> score, sections = kv.evaluate_word_analogies(path)
        >>> score, sections[0]["correct"]
        (1.0, [('MAN', 'KING', 'WOMAN', 'QUEEN')])
        """
        return word_analogies(
            self, analogies, restrict_vocab, case_insensitive, dummy4unknown, similarity_function
        )

    def evaluate_word_pairs(
        self,
        pairs,
        delimiter="\t",
        encoding="utf8",
        restrict_vocab=300000,
        case_insensitive=True,
        dummy4unknown=False,
    ):
        """Correlation of the vectors' similarities with human judgements of word pairs.

        Reads lines ``word1<delimiter>word2<delimiter>score`` (``#`` starts a comment) and
        returns ``(pearson, spearman, oov_ratio)``: scipy's Pearson and Spearman results
        (statistic, p-value) and the percentage of pairs with unknown words.

        Parameters
        ----------
        pairs : str or os.PathLike
            The file of scored word pairs (e.g. WordSim-353, SimLex-999).
        delimiter : str, optional
            What separates the three fields of a line.
        encoding : str, optional
            The file's text encoding.
        restrict_vocab : int, optional
            Only the first (most frequent) this many keys are looked up.
        case_insensitive : bool, optional
            Upper-case the file's words and the keys before comparing them, as gensim does.
        dummy4unknown : bool, optional
            Give pairs with an unknown word similarity 0 instead of skipping them.

        Returns
        -------
        pearson : scipy.stats result
            Pearson's correlation and its p-value (``statistic``, ``pvalue``).
        spearman : scipy.stats result
            Spearman's rank correlation and its p-value.
        oov_ratio : float
            Percentage of pairs with a word outside the vocabulary.

        Examples
        --------
        >>> import os, tempfile
        >>> from hsw2v.keyedvectors import KeyedVectors
        >>> path = os.path.join(tempfile.mkdtemp(), "pairs.tsv")
        >>> _ = open(path, "w").write("# word1 word2 score\\ncat dog 7\\ncat car 1\\ndog car 2\\n")
        >>> kv = KeyedVectors(2); kv.add_vectors(["cat", "dog", "car"], [[1, 0], [1, 0.5], [0, 1]])
        >>> pearson, spearman, oov_ratio = kv.evaluate_word_pairs(path, delimiter=" ")
        >>> round(float(spearman[0]), 2), oov_ratio
        (1.0, 0.0)
        """
        return word_pairs(
            self, pairs, delimiter, encoding, restrict_vocab, case_insensitive, dummy4unknown
        )
