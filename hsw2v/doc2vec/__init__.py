"""Doc2Vec: paragraph vectors on Word2Vec's training step (Le & Mikolov 2014).

``from hsw2v import Doc2Vec, TaggedDocument`` in place of ``from gensim.models.doc2vec
import Doc2Vec, TaggedDocument``: the document's row is one more input kind of the kernel's
step (:mod:`hsw2v.doc2vec._model`), with gensim 4.4's API; ``docs/doc2vec.md`` says when to
choose PV-DBOW or PV-DM and what differs from gensim.
"""

from hsw2v.corpora import TaggedDocument, TaggedLineDocument
from hsw2v.doc2vec._model import Doc2Vec

__all__ = ["Doc2Vec", "TaggedDocument", "TaggedLineDocument"]
