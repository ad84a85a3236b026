"""What gensim's file habits mean for hsw2v's files: its pickles and its ``save()`` options.

Both models' ``save`` and ``load`` use this (:class:`hsw2v.Word2Vec`,
:class:`hsw2v.KeyedVectors`): a pickle written by gensim's ``save()`` is recognised by its
first byte (never unpickled) and answered with the ways to convert it; gensim's ``save()``
options are accepted and what hsw2v does with each is logged.
"""

from __future__ import annotations

import logging

from hsw2v._paths import require_regular_file

# logged under the public module's name, which users (and their log filters) know
logger = logging.getLogger("hsw2v.gensim_compat")

_PICKLE_PROTOCOL_MARK = b"\x80"  # a pickle of protocol 2 or later starts with PROTO


def is_pickle(path) -> bool:
    """Whether ``path`` starts like a pickle of protocol 2 or later (what gensim's ``save()``
    writes), judged from its first byte; the file is not unpickled."""
    try:
        require_regular_file(path)  # a FIFO would block the open
        with open(path, "rb") as fh:
            return fh.read(1) == _PICKLE_PROTOCOL_MARK
    except (OSError, ValueError):
        return False


def not_a_bundle_error(exc: ValueError, path, cls_name: str) -> ValueError:
    """The error ``Word2Vec.load`` / ``KeyedVectors.load`` raise for a file that is not an hsw2v
    bundle: for a gensim pickle it names the ways out (through gensim, which the user runs)."""
    if not is_pickle(path):
        return exc
    gensim_cls = cls_name if cls_name in ("Word2Vec", "FastText") else "KeyedVectors"
    return ValueError(
        f"{exc}: it is a pickle, as gensim's save() writes, and hsw2v never unpickles files "
        "(loading a pickle can run any code it holds). With gensim installed, load it through "
        f"gensim and convert: {cls_name}.from_gensim(gensim.models.{gensim_cls}.load(path)); "
        "for a file you trust, hsw2v.gensim_compat.load_gensim_pickle(path, trusted=True) does "
        "both; or export it with gensim's save_word2vec_format()"
    )


# ------------------------------------------------------------------------ gensim's save() options
GENSIM_SEP_LIMIT = 10 * 1024**2  # gensim's SaveLoad.save defaults
GENSIM_PICKLE_PROTOCOL = 4


def explain_save_options(separately, sep_limit, ignore, pickle_protocol, saved) -> None:
    """Say what hsw2v's ``save()`` does with gensim's ``SaveLoad.save`` options (logged at
    INFO, or a warning where the request is not honoured); ``saved`` names the attributes
    the file stores. Only options given other than gensim's defaults are mentioned.

    * ``separately`` / ``sep_limit``: gensim stores large arrays outside the pickle so that
      ``load(mmap='r')`` can map them; every hsw2v array is its own aligned ``.npy`` member
      of the bundle, always mappable, so there is nothing to do.
    * ``ignore``: attributes hsw2v never stores (``cum_table``, norms: rebuilt on load) are
      left out as asked; the attributes the file does store are still stored (a model file
      holds everything needed to load and train it), with a warning.
    * ``pickle_protocol``: unused, hsw2v files hold no pickle.
    """
    if separately is not None or sep_limit != GENSIM_SEP_LIMIT:
        logger.info(
            "save(separately=%r, sep_limit=%r): every array is already stored as its own "
            "aligned .npy member, which load(mmap='r') maps; nothing else to do",
            separately,
            sep_limit,
        )
    kept = sorted(set(ignore or ()) & set(saved))
    if kept:
        logger.warning(
            "save(ignore=%r): %s stored anyway, as a model file holds everything needed to "
            "load it again",
            sorted(ignore),
            ", ".join(kept),
        )
    elif ignore:
        logger.info("save(ignore=%r): not stored by hsw2v in any case", sorted(ignore))
    if pickle_protocol != GENSIM_PICKLE_PROTOCOL:
        logger.info("save(pickle_protocol=%r): unused, hsw2v files hold no pickle", pickle_protocol)
