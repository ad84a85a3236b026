"""Reader and writer of the ``.bin`` model files of Facebook's fastText tool, and its tree.

The format, as fastText 0.9.2 writes it (``FastText::saveModel`` in ``src/fasttext.cc``;
gensim's ``gensim/models/_fasttext_bin.py`` reads and writes the same), all numbers
little-endian (fastText writes its machine's order; every machine it runs on is
little-endian):

==============================  ===========================================================
bytes                           what
==============================  ===========================================================
int32 magic, int32 version      793712314, then 12 (11 is read too; fastText refuses > 12)
12 x int32, float64             ``Args::save``: dim, ws, epoch, minCount, neg, wordNgrams,
                                loss (1 hs, 2 ns, 3 softmax, 4 ova), model (1 cbow,
                                2 skipgram, 3 supervised), bucket, minn, maxn,
                                lrUpdateRate; then t
int32 size, nwords, nlabels     ``Dictionary::save``: entries (size = nwords + nlabels)
int64 ntokens, pruneidx_size    ntokens; pruneidx_size is -1 unless the dictionary was
                                pruned (quantized supervised models only)
size x (bytes, NUL, int64,      each entry: the word's bytes ended by a NUL, its count and
int8)                           its type (0 word, 1 label); words first, then labels
pruneidx_size x (int32, int32)  the pruned index's pairs
bool quant_input                1 for a quantized (``.ftz``) model: refused here
int64 m, int64 n, m x n float32 ``DenseMatrix::save``: the input matrix, m = nwords + bucket
                                rows (the words' own vectors, then the n-gram buckets)
bool qout                       1 only in a quantized model: refused here
int64 m, int64 n, m x n float32 the output matrix: nwords rows (nlabels if supervised)
==============================  ===========================================================

Supervised models (``-supervised``, labels in the dictionary) are read and written too: only
the output matrix's height differs. ``maxn`` is the file's: fastText itself sets it to 0
when it loads a version-11 supervised model. Files from fastText before the magic number (2017) are
refused.

Every size is checked against the bytes left in the file before anything is allocated, and
every way a file can be wrong raises :class:`~hsw2v.exceptions.FacebookFormatError` (or
:class:`~hsw2v.exceptions.FacebookTruncatedError` for a file that ends early), both
ValueErrors. NaN or infinite weights are read as they are.

Words are UTF-8. A word that is not valid UTF-8 is decoded with ``unicode_errors``
(``"backslashreplace"`` by default, giving the keys gensim's ``load_facebook_model`` gives);
``"surrogateescape"`` keeps the original bytes, and the writer restores them, so such a file
round-trips byte for byte.

:func:`facebook_hs_tree` (:mod:`hsw2v.fasttext._facebook_tree`, re-exported here) builds the
tree of fastText's ``-loss hs`` from the counts; see its docstring for how fastText's output
rows map onto hsw2v's ``syn1``. The reader takes its bytes through
:class:`~hsw2v.fasttext._byte_source.ByteSource`, which checks each size against the bytes
left before anything is allocated.
"""

from __future__ import annotations

import logging
import os
import struct
from array import array
from dataclasses import dataclass, field

import numpy as np

from hsw2v._atomic_files import atomic_file
from hsw2v.exceptions import FacebookFormatError, FacebookTruncatedError
from hsw2v.fasttext._byte_source import FLOAT32 as _FLOAT32
from hsw2v.fasttext._byte_source import ByteSource
from hsw2v.fasttext._facebook_tree import facebook_hs_tree

__all__ = ["FacebookModel", "facebook_hs_tree", "read_facebook_bin", "write_facebook_bin"]

logger = logging.getLogger(__name__)

FASTTEXT_MAGIC = 793712314
FASTTEXT_VERSION = 12
READABLE_VERSIONS = (11, 12)
LOSS_NAMES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
MODEL_NAMES = {1: "cbow", 2: "skipgram", 3: "supervised"}
WORD, LABEL = 0, 1  # entry types

_LOSS_IDS = {name: i for i, name in LOSS_NAMES.items()}
_MODEL_IDS = {name: i for i, name in MODEL_NAMES.items()}
_SIGNATURE = struct.Struct("<2i")
_ARGS = struct.Struct("<12id")
_DICT_HEAD = struct.Struct("<3i2q")
_ENTRY_TAIL = struct.Struct("<qb")
_MATRIX_HEAD = struct.Struct("<2q")
_MIN_ENTRY_BYTES = 1 + _ENTRY_TAIL.size  # an empty word: its NUL, count and type
_ARG_NAMES = (
    "dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate t".split()
)


@dataclass
class FacebookModel:
    """Everything a fastText ``.bin`` file holds (see the module docstring for the format).

    The arguments keep fastText's names (``minCount``, ``wordNgrams``, ``lrUpdateRate``); its
    enums are names: ``loss`` is one of ``"hs"``, ``"ns"``, ``"softmax"``, ``"ova"`` and
    ``model`` one of ``"cbow"``, ``"skipgram"``, ``"supervised"``.

    ``words`` lists the dictionary in fastText's order (the words, most frequent first, then
    the labels), ``counts`` (int64) and ``entry_types`` (int8: 0 word, 1 label) are parallel
    to it. ``input_matrix`` (float32, ``(nwords + bucket) x dim``) holds the words' own
    vectors, then the n-gram buckets; ``output_matrix`` (float32, ``nwords x dim``, or
    ``nlabels x dim`` for a supervised model) is None when read with ``full_model=False``.

    Examples
    --------
    >>> import numpy as np
    >>> m = FacebookModel(dim=2, ws=5, epoch=5, minCount=1, neg=5, wordNgrams=1, loss="hs",
    ...     model="skipgram", bucket=3, minn=3, maxn=6, lrUpdateRate=100, t=1e-4,
    ...     words=["</s>", "a"], counts=np.array([3, 2]), entry_types=np.zeros(2, np.int8),
    ...     ntokens=5, nwords=2, nlabels=0, input_matrix=np.zeros((5, 2), np.float32),
    ...     output_matrix=np.zeros((2, 2), np.float32))
    >>> m.validate(); m.vocab_size, m.word_vectors.shape, m.ngram_vectors.shape
    (2, (2, 2), (3, 2))
    """

    dim: int
    ws: int
    epoch: int
    minCount: int
    neg: int
    wordNgrams: int
    loss: str
    model: str
    bucket: int
    minn: int
    maxn: int
    lrUpdateRate: int
    t: float
    words: list[str]
    counts: np.ndarray
    entry_types: np.ndarray
    ntokens: int
    nwords: int
    nlabels: int
    input_matrix: np.ndarray
    output_matrix: np.ndarray | None
    pruneidx_size: int = -1
    pruneidx: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int32))
    version: int = FASTTEXT_VERSION

    @property
    def vocab_size(self) -> int:
        """The number of dictionary entries (fastText's ``size``): ``nwords + nlabels``."""
        return len(self.words)

    @property
    def word_vectors(self) -> np.ndarray:
        """The words' own input vectors: the first ``nwords`` rows of ``input_matrix``."""
        return self.input_matrix[: self.nwords]

    @property
    def ngram_vectors(self) -> np.ndarray:
        """The n-gram buckets' input vectors: the last ``bucket`` rows of ``input_matrix``."""
        return self.input_matrix[self.nwords :]

    def validate(self) -> None:
        """Raise ValueError unless the fields describe a file fastText can load: known enum
        names, sizes that agree with each other, matrices of the right shape (float32).

        Examples
        --------
        >>> import numpy as np
        >>> m = FacebookModel(dim=2, ws=5, epoch=5, minCount=1, neg=5, wordNgrams=1,
        ...     loss="hs", model="cbow", bucket=0, minn=0, maxn=0, lrUpdateRate=100, t=1e-4,
        ...     words=["a"], counts=np.array([1]), entry_types=np.zeros(1, np.int8),
        ...     ntokens=1, nwords=1, nlabels=0, input_matrix=np.zeros((1, 3), np.float32),
        ...     output_matrix=None)
        >>> m.validate()
        Traceback (most recent call last):
        ...
        ValueError: input_matrix has shape (1, 3), expected (1, 2) (nwords + bucket x dim)
        """
        if self.loss not in _LOSS_IDS:
            raise ValueError(f"loss must be one of {sorted(_LOSS_IDS)}, got {self.loss!r}")
        if self.model not in _MODEL_IDS:
            raise ValueError(f"model must be one of {sorted(_MODEL_IDS)}, got {self.model!r}")
        for name in _ARG_NAMES[:-1]:
            if name not in ("loss", "model"):
                _check_int32(name, getattr(self, name))
        for name in ("ntokens", "pruneidx_size"):
            value = getattr(self, name)
            if not isinstance(value, int | np.integer) or not -(2**63) <= value < 2**63:
                raise ValueError(f"{name} must be an int64, got {value!r}")
        _check_sizes(self.dim, self.bucket, self.minn, self.maxn, self.nwords, self.nlabels)
        if self.ntokens < 0:
            raise ValueError(f"ntokens must be >= 0, got {self.ntokens}")
        size = len(self.words)
        if size != self.nwords + self.nlabels:
            raise ValueError(f"{size} words, but nwords + nlabels = {self.nwords} + {self.nlabels}")
        for name in ("counts", "entry_types"):
            arr = np.asarray(getattr(self, name))
            if arr.shape != (size,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(f"{name} must hold one integer per word ({size})")
        if size and np.asarray(self.counts).min() < 0:
            raise ValueError("counts must be >= 0")
        types = np.asarray(self.entry_types)
        if (types[: self.nwords] != WORD).any() or (types[self.nwords :] != LABEL).any():
            raise ValueError(
                "entry_types must be 0 (word) for the first nwords entries, 1 (label) after"
            )
        for word in self.words:
            if not isinstance(word, str) or "\0" in word:
                raise ValueError(f"every word must be a str without NUL, got {word!r}")
        pruneidx = np.asarray(self.pruneidx)
        expected = max(self.pruneidx_size, 0)
        if pruneidx.shape != (expected, 2) or not np.issubdtype(pruneidx.dtype, np.integer):
            raise ValueError(f"pruneidx must be an integer array of shape ({expected}, 2)")
        _check_matrix(
            "input_matrix",
            self.input_matrix,
            (self.nwords + self.bucket, self.dim),
            "nwords + bucket x dim",
        )
        if self.output_matrix is not None:
            rows, what = _output_rows(self.model, self.nwords, self.nlabels)
            _check_matrix("output_matrix", self.output_matrix, (rows, self.dim), what)
        if not isinstance(self.version, int | np.integer) or self.version not in READABLE_VERSIONS:
            raise ValueError(f"version must be one of {READABLE_VERSIONS}, got {self.version!r}")


def _check_int32(name, value) -> None:
    if not isinstance(value, int | np.integer) or not -(2**31) <= value < 2**31:
        raise ValueError(f"{name} must be an int32, got {value!r}")


def _check_sizes(dim, bucket, minn, maxn, nwords, nlabels, error=ValueError) -> None:
    for name, value, low in (
        ("dim", dim, 1),
        ("bucket", bucket, 0),
        ("minn", minn, 0),
        ("maxn", maxn, 0),
        ("nwords", nwords, 0),
        ("nlabels", nlabels, 0),
    ):
        if value < low:
            raise error(f"{name} must be >= {low}, got {value}")


def _output_rows(model: str, nwords: int, nlabels: int) -> tuple[int, str]:
    if model == "supervised":
        return nlabels, "nlabels x dim"
    return nwords, "nwords x dim"


def _check_matrix(name, matrix, shape, what) -> None:
    matrix = np.asarray(matrix)
    if matrix.shape != shape:
        raise ValueError(f"{name} has shape {matrix.shape}, expected {shape} ({what})")
    if matrix.dtype != np.float32:
        raise ValueError(f"{name} must be float32, got {matrix.dtype}")


# ------------------------------------------------------------------------------ reading
def read_facebook_bin(
    path_or_file, *, full_model: bool = True, unicode_errors: str = "backslashreplace"
) -> FacebookModel:
    """Read a fastText ``.bin`` model file (see the module docstring for the format).

    Parameters
    ----------
    path_or_file : str, bytes, os.PathLike or binary file object
        A path, or a file object open for binary reading, such as ``gzip.open(path)`` (read
        from its current position; where it is left afterwards is unspecified).
    full_model : bool
        False skips the output matrix (``output_matrix`` is None): enough for the vectors,
        not for training on, as gensim's ``load_facebook_vectors``.
    unicode_errors : str
        How to decode a word that is not valid UTF-8 (see the module docstring).

    Raises
    ------
    hsw2v.exceptions.FacebookFormatError
        A file fastText did not write this way: another format, a quantized model, or sizes
        that disagree (with each other or with the file's length);
        :class:`~hsw2v.exceptions.FacebookTruncatedError` when the file ends early.

    Examples
    --------
    >>> import io
    >>> read_facebook_bin(io.BytesIO(b"not a model"))
    Traceback (most recent call last):
    ...
    hsw2v.exceptions.FacebookFormatError: <stream>: not a fastText .bin file (magic number 544501614, expected 793712314; files from fastText before 2017 have none and are not read)
    """
    if isinstance(path_or_file, str | bytes | os.PathLike):
        with open(path_or_file, "rb") as fh:
            return _read(ByteSource(fh, os.fsdecode(path_or_file)), full_model, unicode_errors)
    if not isinstance(path_or_file.read(0), bytes | bytearray):
        raise TypeError("read_facebook_bin needs a file opened for binary reading ('rb')")
    name = getattr(path_or_file, "name", None)
    name = os.fsdecode(name) if isinstance(name, str | bytes) else "<stream>"
    return _read(ByteSource(path_or_file, name), full_model, unicode_errors)


def _read(src: ByteSource, full_model: bool, unicode_errors: str) -> FacebookModel:
    name = src.name
    magic, version = src.unpack(_SIGNATURE, "the signature")
    if magic != FASTTEXT_MAGIC:
        raise FacebookFormatError(
            f"{name}: not a fastText .bin file (magic number {magic}, expected "
            f"{FASTTEXT_MAGIC}; files from fastText before 2017 have none and are not read)"
        )
    if version not in READABLE_VERSIONS:
        raise FacebookFormatError(
            f"{name}: fastText file format version {version}; versions "
            f"{' and '.join(map(str, READABLE_VERSIONS))} are read"
        )
    values = src.unpack(_ARGS, "the arguments")
    args = dict(zip(_ARG_NAMES, values, strict=True))
    if args["loss"] not in LOSS_NAMES:
        raise FacebookFormatError(f"{name}: unknown loss {args['loss']} (1 to 4 are known)")
    if args["model"] not in MODEL_NAMES:
        raise FacebookFormatError(f"{name}: unknown model {args['model']} (1 to 3 are known)")
    args["loss"] = LOSS_NAMES[args["loss"]]
    args["model"] = MODEL_NAMES[args["model"]]

    size, nwords, nlabels, ntokens, pruneidx_size = src.unpack(_DICT_HEAD, "the dictionary")
    _check_sizes(
        args["dim"], args["bucket"], args["minn"], args["maxn"], nwords, nlabels,
        error=lambda msg: FacebookFormatError(f"{name}: {msg}"),
    )  # fmt: skip
    if ntokens < 0:
        raise FacebookFormatError(f"{name}: ntokens must be >= 0, got {ntokens}")
    if size != nwords + nlabels:
        raise FacebookFormatError(
            f"{name}: the dictionary holds {size} entries, but nwords + nlabels = "
            f"{nwords} + {nlabels}"
        )
    left = src.left()
    if left is not None and size * _MIN_ENTRY_BYTES > left:
        raise FacebookTruncatedError(
            f"{name}: the dictionary announces {size} entries, which need at least "
            f"{size * _MIN_ENTRY_BYTES} bytes, but only {left} are left (truncated or damaged)"
        )
    words, counts, types, undecodable = _read_entries(src, size, unicode_errors)
    if undecodable:
        logger.warning(
            "%s: %d words are not valid UTF-8; decoded with errors=%r (first: %r)",
            name, len(undecodable), unicode_errors, undecodable[0],
        )  # fmt: skip
    if counts.size and counts.min() < 0:
        first = int(np.flatnonzero(counts < 0)[0])
        raise FacebookFormatError(f"{name}: entry {first} has a negative count")
    if (types[:nwords] != WORD).any() or (types[nwords:] != LABEL).any():
        raise FacebookFormatError(
            f"{name}: entry types must be 0 (word) for the first {nwords} entries and "
            f"1 (label) for the {nlabels} after them"
        )
    if len(set(words)) != len(words):
        seen = set()
        duplicate = next(w for w in words if w in seen or seen.add(w))
        raise FacebookFormatError(f"{name}: the dictionary lists {duplicate!r} twice")

    pruneidx = np.zeros((0, 2), dtype=np.int32)
    if pruneidx_size > 0:
        left = src.left()
        if left is not None and pruneidx_size * 8 > left:
            raise FacebookTruncatedError(
                f"{name}: the pruned index announces {pruneidx_size} pairs, but only "
                f"{left} bytes are left (truncated or damaged)"
            )
        raw = src.take(pruneidx_size * 8, "the pruned index")
        pruneidx = np.frombuffer(raw, dtype="<i4").astype(np.int32).reshape(-1, 2)

    (quant_input,) = src.unpack(struct.Struct("<B"), "the quantization flag")
    if quant_input == 1:
        raise FacebookFormatError(
            f"{name}: a quantized fastText model (.ftz): its matrices are compressed and "
            "cannot be read here; use the .bin file it was quantized from"
        )
    if quant_input != 0:
        raise FacebookFormatError(f"{name}: quantization flag {quant_input}, expected 0 or 1")
    if pruneidx_size >= 0:
        raise FacebookFormatError(
            f"{name}: a pruned dictionary ({pruneidx_size} pairs) in a model that is not "
            "quantized (fastText refuses such a file too)"
        )
    dim, bucket = args["dim"], args["bucket"]
    input_matrix = _read_matrix(
        src, (nwords + bucket, dim), "the input matrix", "nwords + bucket x dim"
    )
    output_matrix = None
    if full_model:
        (qout,) = src.unpack(struct.Struct("<B"), "the output quantization flag")
        if qout != 0:
            raise FacebookFormatError(
                f"{name}: output quantization flag {qout} in a model that is not quantized"
            )
        rows, what = _output_rows(args["model"], nwords, nlabels)
        output_matrix = _read_matrix(src, (rows, dim), "the output matrix", what)
        if not src.at_end():
            raise FacebookFormatError(f"{name}: unexpected bytes after the output matrix")
    return FacebookModel(
        **args,
        words=words,
        counts=counts,
        entry_types=types,
        ntokens=ntokens,
        nwords=nwords,
        nlabels=nlabels,
        input_matrix=input_matrix,
        output_matrix=output_matrix,
        pruneidx_size=pruneidx_size,
        pruneidx=pruneidx,
        version=version,
    )


def _read_entries(src: ByteSource, size: int, unicode_errors: str):
    words = []
    counts = array("q")
    types = array("b")
    undecodable = []
    unpack = _ENTRY_TAIL.unpack
    for i in range(size):
        raw = src.word(f"the word of entry {i}")
        try:
            word = raw.decode("utf-8")
        except UnicodeDecodeError:
            try:
                word = raw.decode("utf-8", errors=unicode_errors)
            except UnicodeDecodeError as exc:
                raise FacebookFormatError(
                    f"{src.name}: entry {i} is not valid UTF-8 ({exc})"
                ) from exc
            undecodable.append(word)
        count, kind = unpack(src.take(_ENTRY_TAIL.size, f"entry {i} ({word!r})"))
        words.append(word)
        counts.append(count)
        types.append(kind)
    return (
        words,
        np.frombuffer(counts, dtype=np.int64).copy(),
        np.frombuffer(types, dtype=np.int8).copy(),
        undecodable,
    )


def _read_matrix(src: ByteSource, shape: tuple[int, int], what: str, expected: str) -> np.ndarray:
    rows, cols = src.unpack(_MATRIX_HEAD, f"the shape of {what}")
    if (rows, cols) != shape:
        raise FacebookFormatError(
            f"{src.name}: {what} is {rows} x {cols}, but the header makes it "
            f"{shape[0]} x {shape[1]} ({expected})"
        )
    return src.matrix(rows, cols, what)


# ------------------------------------------------------------------------------ writing
def write_facebook_bin(path, model: FacebookModel) -> None:
    """Write ``model`` as a fastText ``.bin`` file that fastText's ``load_model`` and gensim's
    ``load_facebook_model`` read.

    The file is written to a temporary file beside ``path`` and renamed into place: a write
    that fails (or is interrupted) leaves any previous file at ``path`` as it was. A model
    read with :func:`read_facebook_bin` is written back byte for byte (words that are not
    valid UTF-8 too, when read with ``unicode_errors="surrogateescape"``).

    Raises
    ------
    ValueError
        ``model`` does not describe a valid file (:meth:`FacebookModel.validate`), or has no
        output matrix (read with ``full_model=False``).

    Examples
    --------
    >>> import os, tempfile, numpy as np
    >>> m = FacebookModel(dim=2, ws=5, epoch=5, minCount=1, neg=5, wordNgrams=1, loss="hs",
    ...     model="skipgram", bucket=3, minn=3, maxn=6, lrUpdateRate=100, t=1e-4,
    ...     words=["</s>", "a"], counts=np.array([3, 2]), entry_types=np.zeros(2, np.int8),
    ...     ntokens=5, nwords=2, nlabels=0, input_matrix=np.ones((5, 2), np.float32),
    ...     output_matrix=np.zeros((2, 2), np.float32))
    >>> path = os.path.join(tempfile.mkdtemp(), "model.bin")
    >>> write_facebook_bin(path, m)
    >>> read_facebook_bin(path).words
    ['</s>', 'a']
    """
    model.validate()
    if model.output_matrix is None:
        raise ValueError(
            "the model has no output matrix (read with full_model=False): a .bin file needs it"
        )
    encoded = []
    for word in model.words:
        try:
            encoded.append(word.encode("utf-8", errors="surrogateescape"))
        except UnicodeEncodeError as exc:
            raise ValueError(f"cannot encode the word {word!r} as UTF-8 ({exc})") from exc
    with atomic_file(path) as (fd, _tmp):
        with os.fdopen(fd, "wb") as fh:
            _write(fh, model, encoded)
            fh.flush()
            os.fsync(fh.fileno())


def _write(fh, model: FacebookModel, encoded: list[bytes]) -> None:
    fh.write(_SIGNATURE.pack(FASTTEXT_MAGIC, int(model.version)))
    ids = {"loss": _LOSS_IDS[model.loss], "model": _MODEL_IDS[model.model]}
    args = [ids[name] if name in ids else int(getattr(model, name)) for name in _ARG_NAMES[:-1]]
    fh.write(_ARGS.pack(*args, float(model.t)))
    fh.write(
        _DICT_HEAD.pack(
            len(model.words),
            int(model.nwords),
            int(model.nlabels),
            int(model.ntokens),
            int(model.pruneidx_size),
        )
    )
    pack = _ENTRY_TAIL.pack
    counts = np.asarray(model.counts).tolist()
    types = np.asarray(model.entry_types).tolist()
    fh.write(
        b"".join(
            raw + b"\0" + pack(count, kind)
            for raw, count, kind in zip(encoded, counts, types, strict=True)
        )
    )
    fh.write(np.ascontiguousarray(model.pruneidx, dtype="<i4").tobytes())
    for matrix in (model.input_matrix, model.output_matrix):
        fh.write(b"\0")  # quant_input, then qout: never quantized
        matrix = np.ascontiguousarray(matrix, dtype=_FLOAT32)
        fh.write(_MATRIX_HEAD.pack(*matrix.shape))
        if matrix.size:  # (an empty view cannot be cast to bytes)
            fh.write(memoryview(matrix).cast("B"))
