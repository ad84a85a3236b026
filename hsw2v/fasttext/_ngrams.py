"""fastText's character n-grams and their hash buckets.

A word ``w`` is read as ``"<" + w + ">"`` in UTF-8. Its n-grams are the runs of ``n``
*characters* (not bytes) for ``min_n <= n <= max_n``, listed by start position and, for one
start, by growing length; the lone ``"<"`` and ``">"`` are not n-grams, and duplicates are
kept (each occurrence is summed). A character starts at each byte that is not a UTF-8
continuation byte (``0b10xxxxxx``). This is fastText's ``Dictionary::computeSubwords``
(Bojanowski et al., "Enriching Word Vectors with Subword Information", 2017), as gensim 4.4's
``compute_ngrams_bytes`` reproduces it.

An n-gram's bucket is its 32-bit FNV-1a hash modulo ``bucket``, with fastText's quirk that each
byte is sign-extended before the xor (``h ^= uint32(int8(byte))``): bytes above 0x7F (every byte
of a non-ASCII character) hash differently from textbook FNV-1a. fastText's
``Dictionary::hash``; gensim's ``ft_hash_bytes``.

In fastText's input matrix the ``V`` word rows come first and the ``bucket`` n-gram rows after
them, so the rows a word trains are its own row ``i`` and ``V + bucket_of(g)`` for each of
its n-grams ``g``: :func:`subword_table` lists them for a whole vocabulary.

How it is computed: FNV-1a folds one byte at a time, so the hash of the n-gram of ``n``
characters at a position is the hash of the one of ``n - 1`` characters there, folded with the
bytes of one more character. :func:`subword_table` keeps one running hash per character
position of the whole vocabulary and extends all of them at once, one character length at a
time (``max_n`` NumPy passes of at most 4 byte steps), instead of hashing each n-gram from its
first byte in Python.

Example
-------
>>> compute_ngrams_bytes("ab", 3, 3)
[b'<ab', b'ab>']
>>> ngram_hashes("ab", 3, 3, 2000000).tolist()
[209508, 1241756]
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "DEFAULT_MAX_ROWS",
    "compute_ngrams_bytes",
    "ft_hash_bytes",
    "ngram_hashes",
    "subword_table",
]

_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619
_MAX_ROW = 2**31 - 1  # rows are int32 indices into the input matrix
# The most rows subword_table builds unless told otherwise: 2**28 rows are 1 GiB of int32
# (scratch memory comes on top, bounded by _CHUNK_CHARS), and over four times what fastText's
# largest published vocabulary needs (2 million words of ~10 characters: ~60 million rows
# with min_n=3, max_n=6). A vocabulary past it holds absurdly long tokens, which fastText
# would expand without limit.
DEFAULT_MAX_ROWS = 2**28
_CHUNK_CHARS = 1 << 18  # characters hashed per NumPy pass: bounds the scratch arrays
_SCALAR_CHARS = 64  # ngram_hashes hashes shorter words in plain Python


def ft_hash_bytes(data: bytes) -> int:
    """fastText's 32-bit FNV-1a hash of `data`, each byte sign-extended before the xor.

    Equal to gensim's ``gensim.models.fasttext_inner.ft_hash_bytes``.

    Parameters
    ----------
    data : bytes
        An n-gram in UTF-8.

    Returns
    -------
    int
        The hash, in ``[0, 2**32)``.

    Examples
    --------
    >>> ft_hash_bytes(b""), ft_hash_bytes(b"a"), ft_hash_bytes("é".encode())
    (2166136261, 3826002220, 1023043777)
    """
    h = _FNV_OFFSET
    for byte in data:
        if byte & 0x80:
            byte |= 0xFFFFFF00  # int8 -> uint32, as fastText's char is signed
        h = ((h ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def _check_lengths(min_n, max_n) -> tuple[int, int]:
    min_n, max_n = int(min_n), int(max_n)
    if min_n < 0 or max_n < 0:
        raise ValueError(f"min_n and max_n must be >= 0, got min_n={min_n}, max_n={max_n}")
    return min_n, max_n


def compute_ngrams_bytes(word: str, min_n: int, max_n: int) -> list[bytes]:
    """The character n-grams of ``"<" + word + ">"`` in UTF-8, in fastText's order.

    Equal to gensim's ``gensim.models.fasttext_inner.compute_ngrams_bytes``: by start, then
    by length; duplicates kept; no n-gram when ``max_n < min_n``; ``min_n = 0`` acts as 1.

    Parameters
    ----------
    word : str
        The word (another key is formatted with ``str``, as gensim's ``'<%s>'`` does).
    min_n, max_n : int
        Shortest and longest n-gram, in characters.

    Returns
    -------
    list of bytes

    Raises
    ------
    UnicodeEncodeError
        If `word` holds a lone surrogate (it has no UTF-8 form).

    Examples
    --------
    >>> compute_ngrams_bytes("é", 1, 2)
    [b'<\\xc3\\xa9', b'\\xc3\\xa9', b'\\xc3\\xa9>']
    """
    min_n, max_n = _check_lengths(min_n, max_n)
    extended = f"<{word}>"
    extended.encode("utf-8")  # a word with no UTF-8 form fails here, as in gensim
    length, shortest = len(extended), max(min_n, 1)
    return [
        extended[start : start + n].encode("utf-8")
        for start in range(length)
        for n in range(shortest, min(max_n, length - start) + 1)
        if not (n == 1 and (start == 0 or start == length - 1))
    ]


def _ngram_counts(char_lengths: np.ndarray, min_n: int, max_n: int) -> np.ndarray:
    """How many n-grams words of `char_lengths` characters (with their ``<``, ``>``) have."""
    lengths = np.asarray(char_lengths, dtype=np.int64)
    shortest = max(min_n, 1)
    longest = np.minimum(max_n, lengths)
    k = np.maximum(longest - shortest + 1, 0)  # how many n-gram lengths fit
    counts = k * (lengths + 1) - (shortest + longest) * k // 2  # sum of (L - n + 1)
    if shortest == 1 and max_n >= 1:
        counts -= 2  # the lone "<" and ">"
    return counts


def _raw_hashes(encoded: list[bytes], min_n: int, max_n: int, piece=None):
    """``(counts, hashes)``: per word of `encoded` (each ``"<w>"`` in UTF-8) its number of
    n-grams, and all their unreduced 32-bit hashes, word after word in fastText's order.

    `piece`, for one slice of a long word (:func:`_long_word_hashes`): ``(starts, first,
    last)``, the n-grams come from the slice's first ``starts`` characters only, and the
    slice holds the word's first (``"<"``) and last (``">"``) character if `first`, `last`.
    """
    n_words = len(encoded)
    shortest = max(min_n, 1)
    if max_n < shortest or not n_words:
        return np.zeros(n_words, np.int64), np.zeros(0, np.uint32)
    emitted, first, last = piece or (None, True, True)
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    signed = buf.view(np.int8).astype(np.uint32)  # sign extension: 0x80 -> 0xFFFFFF80
    starts = np.flatnonzero((buf & 0xC0) != 0x80)  # the first byte of every character
    n_chars = len(starts)
    char_bytes = np.diff(starts, append=len(buf)).astype(np.int8)  # every word starts one
    word_bytes = np.fromiter(map(len, encoded), dtype=np.int64, count=n_words)
    word_of_char = np.searchsorted(np.cumsum(word_bytes), starts, side="right")
    chars_per_word = np.bincount(word_of_char, minlength=n_words)
    first_char = np.cumsum(chars_per_word) - chars_per_word
    position = np.arange(n_chars) - first_char[word_of_char]  # character index in its word
    remaining = chars_per_word[word_of_char] - position  # characters from here to the end

    widths = max_n - shortest + 1
    table = np.zeros((n_chars, widths), dtype=np.uint32)
    keep = np.zeros((n_chars, widths), dtype=bool)
    running = np.full(n_chars, _FNV_OFFSET, dtype=np.uint32)
    prime = np.uint32(_FNV_PRIME)
    for n in range(1, max_n + 1):
        active = np.flatnonzero(remaining >= n)  # positions with an n-gram of n characters
        if not len(active):
            break
        nxt = active + (n - 1)  # the character that extends them
        for b in range(4):  # a UTF-8 character has at most 4 bytes
            more = char_bytes[nxt] > b
            rows = active[more]
            running[rows] = (running[rows] ^ signed[starts[nxt[more]] + b]) * prime
        if n >= shortest:
            column = n - shortest
            table[active, column] = running[active]
            if n == 1:  # the lone "<" and ">" are no n-grams
                keep[active, column] = ((position[active] != 0) | (not first)) & (
                    (remaining[active] != 1) | (not last)
                )
            else:
                keep[active, column] = True
    if emitted is not None:
        keep[emitted:] = False  # the rest of the slice only completes those n-grams
    counts = np.bincount(word_of_char, weights=keep.sum(axis=1), minlength=n_words)
    return counts.astype(np.int64), table[keep]


def _long_word_hashes(word, min_n: int, max_n: int, slice_chars: int):
    """The unreduced n-gram hashes of one word, in arrays covering about `slice_chars`
    characters each, so that the scratch memory stays bounded for a word of any length."""
    extended = f"<{word}>"
    length = len(extended)
    for start in range(0, length, slice_chars):
        stop = min(start + slice_chars, length)
        end = min(stop + max_n - 1, length)  # room for the n-grams that start before stop
        piece = (stop - start, start == 0, end == length)
        yield _raw_hashes([extended[start:end].encode()], min_n, max_n, piece)[1]


def ngram_hashes(word: str, min_n: int, max_n: int, bucket: int) -> np.ndarray:
    """The n-gram buckets of `word`: ``ft_hash_bytes(g) % bucket`` for each n-gram ``g`` of
    :func:`compute_ngrams_bytes`, in its order.

    Equal to gensim's ``ft_ngram_hashes`` (as uint32), except that ``bucket == 0`` gives no
    buckets where gensim divides by zero.

    Parameters
    ----------
    word : str
    min_n, max_n : int
        Shortest and longest n-gram, in characters.
    bucket : int
        Number of hash buckets (0: no n-gram rows).

    Returns
    -------
    numpy.ndarray of uint32

    Examples
    --------
    >>> ngram_hashes("ab", 3, 3, 10).tolist(), ngram_hashes("ab", 4, 6, 10).tolist()
    ([8, 6], [2])
    """
    min_n, max_n = _check_lengths(min_n, max_n)
    if bucket < 0:
        raise ValueError(f"bucket must be >= 0, got {bucket}")
    if bucket == 0:
        return np.zeros(0, dtype=np.uint32)
    word = word if isinstance(word, str) else str(word)  # a key 5 is the word "5", as in gensim
    if len(word) < _SCALAR_CHARS:  # the scalar definition is quicker than NumPy's set-up
        return np.array(
            [ft_hash_bytes(ngram) % bucket for ngram in compute_ngrams_bytes(word, min_n, max_n)],
            dtype=np.uint32,
        )
    pieces = list(_long_word_hashes(word, min_n, max_n, _CHUNK_CHARS))  # 4 bytes per n-gram
    hashes = np.concatenate(pieces) if pieces else np.zeros(0, np.uint32)
    return hashes % np.uint32(bucket) if bucket < 2**32 else hashes


def subword_table(words, min_n: int, max_n: int, bucket: int, *, max_rows=DEFAULT_MAX_ROWS):
    """The input-matrix rows of every word of a vocabulary, as CSR arrays ``(ptr, rows)``.

    The rows of word ``i`` are ``rows[ptr[i]:ptr[i + 1]]``: ``i`` itself, then ``V + h`` for
    each bucket ``h`` of :func:`ngram_hashes` (``V = len(words)``): indices into fastText's
    input matrix, the ``V`` word rows first and the ``bucket`` n-gram rows after them.

    Cost: about 0.15 s for 100,000 words of 8.5 letters on average (min_n=3, max_n=6,
    bucket=2,000,000: 2.9 million rows, 12.5 MB), with under 40 MB of scratch, on one core
    of a 2-core x86-64 machine; linear in the number of characters. Words are hashed in
    slices of about 262,144 characters (a longer word alone, in pieces), so the scratch
    memory stays bounded whatever the words; the result takes 4 bytes per row.

    fastText puts no bound on a word's n-grams: a token of 10 million characters has 40
    million (min_n=3, max_n=6), a 160 MB table built in about 2 s. The number of rows is
    computed before anything is built, and above `max_rows` (by default
    :data:`DEFAULT_MAX_ROWS`, 2**28 rows: 1 GiB) a ValueError names the longest word,
    instead of the memory running out during the build.

    Parameters
    ----------
    words : sequence of str
        The vocabulary, in row order.
    min_n, max_n : int
        Shortest and longest n-gram, in characters.
    bucket : int
        Number of n-gram rows (0: every word has its own row only).
    max_rows : int, optional
        Refuse to build a table of more rows than this.

    Returns
    -------
    ptr : numpy.ndarray of int64, ``len(words) + 1`` offsets
    rows : numpy.ndarray of int32

    Raises
    ------
    ValueError
        If the table would hold more than `max_rows` rows, or ``V + bucket`` rows do not fit
        int32 indices.

    Examples
    --------
    >>> ptr, rows = subword_table(["ab", "b"], 3, 3, 10)
    >>> ptr.tolist(), rows.tolist()
    ([0, 3, 5], [0, 10, 8, 1, 5])
    """
    min_n, max_n = _check_lengths(min_n, max_n)
    bucket = int(bucket)
    words = [word if isinstance(word, str) else str(word) for word in words]
    n_words = len(words)
    if bucket < 0:
        raise ValueError(f"bucket must be >= 0, got {bucket}")
    if n_words + bucket > _MAX_ROW:
        raise ValueError(
            f"{n_words} words and {bucket} buckets make {n_words + bucket} input rows, more "
            f"than int32 row indices reach ({_MAX_ROW}): lower bucket"
        )
    char_lengths = np.fromiter(map(len, words), dtype=np.int64, count=n_words) + 2
    if bucket:
        counts = _ngram_counts(char_lengths, min_n, max_n)
    else:
        counts = np.zeros(n_words, dtype=np.int64)
    ptr = np.zeros(n_words + 1, dtype=np.int64)
    np.cumsum(counts + 1, out=ptr[1:])
    total = int(ptr[-1])
    if total > max_rows:
        longest = int(np.argmax(char_lengths))
        raise ValueError(
            f"the n-grams of {n_words} words (min_n={min_n}, max_n={max_n}) need {total} "
            f"rows, more than max_rows={max_rows}: the longest word, #{longest}, has "
            f"{char_lengths[longest] - 2} characters. Drop such tokens from the corpus (or "
            "raise max_rows)"
        )
    rows = np.empty(total, dtype=np.int32)
    rows[ptr[:-1]] = np.arange(n_words, dtype=np.int32)
    if not bucket or total == n_words:
        return ptr, rows

    def reduced(hashes):
        hashes = hashes % np.uint32(bucket) if bucket < 2**32 else hashes
        return hashes.astype(np.int64) + n_words

    ends = np.cumsum(char_lengths)
    start = 0
    while start < n_words:
        if char_lengths[start] > _CHUNK_CHARS:  # a long word alone, in slices
            filled = ptr[start] + 1
            for hashes in _long_word_hashes(words[start], min_n, max_n, _CHUNK_CHARS):
                rows[filled : filled + len(hashes)] = reduced(hashes)
                filled += len(hashes)
            if filled != ptr[start + 1]:  # pragma: no cover - the counts are exact
                raise AssertionError(f"word #{start}: n-gram count mismatch")
            start += 1
            continue
        # the next words, up to about _CHUNK_CHARS characters (none of them long)
        limit = ends[start] - char_lengths[start] + _CHUNK_CHARS
        stop = max(int(np.searchsorted(ends, limit, side="right")), start + 1)
        encoded = [f"<{word}>".encode() for word in words[start:stop]]
        chunk_counts, hashes = _raw_hashes(encoded, min_n, max_n)
        if not np.array_equal(chunk_counts, counts[start:stop]):  # pragma: no cover
            raise AssertionError(f"words #{start}-{stop - 1}: n-gram count mismatch")
        region = rows[ptr[start] : ptr[stop]]
        is_ngram = np.ones(len(region), dtype=bool)
        is_ngram[ptr[start:stop] - ptr[start]] = False
        region[is_ngram] = reduced(hashes)
        start = stop
    return ptr, rows
