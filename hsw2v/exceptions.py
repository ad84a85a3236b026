"""hsw2v's exceptions that are also gensim's, so ``except`` clauses written for gensim catch them.

Where gensim 4.4 raises ``RuntimeError``, ``EOFError`` or ``AttributeError`` and hsw2v has a
clearer error of its own (a ``ValueError`` naming what was wrong), hsw2v raises a class that is
both: gensim code catching gensim's type still catches it, and hsw2v code catching
``ValueError`` (or the class itself) too. The messages are hsw2v's.

============================  ==================================  =====================
raised when                   class                               gensim 4.4 raises
============================  ==================================  =====================
the corpus is empty, or no    :class:`EmptyCorpusError`           ``RuntimeError`` (at
word passes ``min_count``                                         ``train()``)
a word2vec file ends before   :class:`TruncatedFileError`         ``EOFError``
its header's count of vectors
``Word2Vec.load`` of a file   :class:`WrongFileKindError`         ``AttributeError``
of another kind
``model.load(...)`` on an     :class:`LoadOnInstanceError`        ``AttributeError``
instance
a fastText ``.bin`` that is   :class:`FacebookFormatError`        ``AssertionError``,
damaged or quantized                                              ``struct.error``, ...
a fastText ``.bin`` that      :class:`FacebookTruncatedError`     ``struct.error``
ends early
============================  ==================================  =====================

The fastText classes are ValueErrors (and the truncated one an ``EOFError``) but not
``AssertionError`` or ``struct.error``, which are gensim's accidents, not its contract.

>>> issubclass(EmptyCorpusError, RuntimeError), issubclass(EmptyCorpusError, ValueError)
(True, True)
"""

from __future__ import annotations

__all__ = [
    "EmptyCorpusError",
    "FacebookFormatError",
    "FacebookTruncatedError",
    "LoadOnInstanceError",
    "TrainingRunningError",
    "TruncatedFileError",
    "WrongFileKindError",
    "class_only_method",
]


class EmptyCorpusError(ValueError, RuntimeError):
    """The corpus yielded no sentences, or no word passed ``min_count`` (gensim: RuntimeError)."""


class TrainingRunningError(RuntimeError):
    """A call that would change the vocabulary, the tree or the weights while ``train()`` runs
    on the model (from a callback or another thread), or a model found changed between two
    epochs (:mod:`hsw2v._guard`)."""


class TruncatedFileError(ValueError, EOFError):
    """A word2vec-format file ended before the vectors its header counts (gensim: EOFError)."""


class FacebookFormatError(ValueError):
    """A fastText ``.bin`` file that cannot be read: not fastText's format, damaged (sizes
    that disagree with each other or with the file), or of a kind that is not supported (a
    quantized ``.ftz`` model)."""


class FacebookTruncatedError(FacebookFormatError, TruncatedFileError):
    """A fastText ``.bin`` file that ends before what its own header announces."""


class WrongFileKindError(ValueError, AttributeError):
    """``Word2Vec.load`` of a file holding something else, e.g. KeyedVectors (gensim:
    AttributeError)."""


class LoadOnInstanceError(TypeError, AttributeError):
    """``load`` called on an instance instead of the class (gensim: AttributeError)."""


class class_only_method(classmethod):  # noqa: N801 - used like classmethod
    """A ``classmethod`` that refuses to be called on an instance, as gensim's
    ``Word2Vec.load`` does: ``model.load(path)`` reads like loading into ``model``, but
    returns a new object and leaves ``model`` unchanged.

    >>> class Model:
    ...     @class_only_method
    ...     def load(cls, path):
    ...         return cls()
    >>> type(Model.load("x")).__name__
    'Model'
    >>> Model().load("x")
    Traceback (most recent call last):
    ...
    hsw2v.exceptions.LoadOnInstanceError: Model.load() must be called on the class: it returns a new Model and leaves this one unchanged; write model = Model.load(...)
    """

    def __get__(self, instance, owner=None):
        if instance is None:
            return super().__get__(instance, owner)
        owner = owner or type(instance)
        name = self.__func__.__name__

        def refuse(*args, **kwargs):
            raise LoadOnInstanceError(
                f"{owner.__name__}.{name}() must be called on the class: it returns a new "
                f"{owner.__name__} and leaves this one unchanged; write model = "
                f"{owner.__name__}.{name}(...)"
            )

        return refuse
