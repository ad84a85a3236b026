"""Growing a trained model's vocabulary (``build_vocab(update=True)``) without breaking its tree.

Under hierarchical softmax every inner node's ``syn1`` row is trained for one split of the
vocabulary: the words below its bit-0 side against those below its bit-1 side (Morin & Bengio
2005; Mikolov et al. 2013). Rebuilding the Huffman tree over the grown vocabulary, as gensim
does, gives most words new codes and paths while the trained rows stay where they were, so a
row ends up deciding a split it never saw. hsw2v instead keeps the old tree exactly and grafts
the new words onto it:

1. the new words (appended after the old ones, so old indices stay) get a Huffman tree of
   their own, built from their counts like any tree (:func:`hsw2v.huffman.build_huffman_tree`);
2. that subtree is joined to the old tree by one new inner node ``J``, placed where it adds the
   least weighted path length ``sum(count * path length)``:

   * *above the old root* (``J`` becomes the root): every old word's path gains ``J`` in
     front and every new word's path is ``J`` + its subtree path; added cost
     ``sum(old counts) + M`` with ``M`` the new words' total count;
   * *at an old leaf* ``w`` (``J`` takes ``w``'s place; ``w`` and the subtree become ``J``'s
     children): only ``w``'s path changes (``J`` is appended to it); every new word's path is
     ``w``'s old path + ``J`` + its subtree path; added cost ``count(w) + M * (depth(w) + 1)``.

   Ties go to the root. At ``J`` the side with the smaller count takes bit 0, the Huffman
   convention;

3. new inner nodes get new ``syn1`` rows, initialised at zero (as every inner node of a fresh
   model), numbered after the old ones: the subtree's in creation order, then ``J`` (so
   ``J`` is row ``V - 2``). The old rows keep their numbers and values, and every old word
   keeps its codes and points except for the one prefix step (root graft) or the one appended
   step (leaf graft) described above. With ``J``'s row at zero its decision is 50/50, so right
   after the update ``P(w | h)`` of the old words on ``J``'s side of the graft is exactly half
   of what it was, and every other old word's probability is unchanged; training on the new
   corpus then learns ``J``'s row like any other.

A one-word model has a one-step path through inner node 0 whose bit-1 side is empty: the new
words' subtree is hung there, and the old word's path does not change at all.

Counts follow gensim: each existing word's count grows by its count in the new scan; a word not
yet in the vocabulary is added when its new count passes ``min_count`` (or ``trim_rule``). The
subsampling thresholds are then recomputed for every word from the grown counts, so that the
stored ``sample_int`` stays a function of the stored counts (gensim recomputes them from the
new scan's counts only, and only for words that passed ``min_count`` in it).

New words' input vectors are drawn as gensim does: rows ``V0..V-1`` of a fresh
``numpy.random.default_rng(seed)`` matrix of the grown shape, uniform in [-1/d, 1/d).
"""

from __future__ import annotations

import logging

import numpy as np

from hsw2v.huffman import Tree, build_huffman_tree
from hsw2v.running.objectives import grow_matrices
from hsw2v.vocab import NULL_WORD, keep_probabilities, keep_vocab_item

logger = logging.getLogger(__name__)

ROOT = -1  # graft site "above the old root"


def graft_site(tree: Tree, counts) -> int:
    """Where :func:`grow_huffman_tree` joins the new words: ``ROOT`` (-1) or the index of the
    old leaf to split, whichever adds the least weighted path length (module docstring, 2).

    Examples
    --------
    >>> old = build_huffman_tree([50, 30, 20])
    >>> graft_site(old, [50, 30, 20, 2])  # a rare new word goes below a rare old word
    2
    >>> graft_site(old, [50, 30, 20, 500])  # a frequent one goes above the old root
    -1
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_old = len(tree.lengths)
    new_total = int(counts[n_old:].sum())
    old = counts[:n_old]
    leaf_cost = old + new_total * (tree.lengths.astype(np.int64) + 1)
    best = int(np.argmin(leaf_cost))
    if leaf_cost[best] < int(old.sum()) + new_total:
        return best
    return ROOT


def grow_huffman_tree(tree: Tree, counts) -> tuple[Tree, int | None]:
    """Graft leaves for new words onto ``tree`` (see the module docstring).

    ``counts`` holds every word's count: the ``V0`` old words first (in the tree's order),
    then the new words. Returns the grown tree over all ``V`` words, whose inner nodes
    ``0..V0-2`` are the old tree's, and the graft site (``ROOT``, an old leaf's index, or
    None when nothing was grafted: no new words, or a one-word old tree).

    Examples
    --------
    >>> old = build_huffman_tree([5, 3, 1, 1])
    >>> grown, site = grow_huffman_tree(old, [5, 3, 1, 1, 2])
    >>> site, old.point(0).tolist(), old.code(0).tolist()  # the split leaf, before
    (0, [2], [1])
    >>> grown.point(0).tolist(), grown.code(0).tolist(), grown.point(4).tolist(), grown.code(4).tolist()
    ([2, 3], [1, 1], [2, 3], [1, 0])
    >>> all((grown.point(w) == old.point(w)).all() for w in range(1, 4))  # the other paths
    True
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_old = len(tree.lengths)
    n_words = len(counts)
    n_new = n_words - n_old
    if n_new < 0:
        raise ValueError(f"counts has {n_words} entries, fewer than the tree's {n_old} words")
    if n_new == 0:
        return tree, None
    old_inner = max(n_old - 1, 1)  # a one-word tree already has its (half-empty) node 0
    if n_new >= 2:  # its inner nodes are numbered after the old ones
        sub = build_huffman_tree(counts[n_old:])
        sub_codes, sub_points, sub_lengths = sub.codes, sub.points + old_inner, sub.lengths
    else:  # one new word: it is the subtree, with an empty path below the junction
        sub_codes = np.zeros((1, 0), dtype=np.uint8)
        sub_points = np.zeros((1, 0), dtype=np.int32)
        sub_lengths = np.zeros(1, dtype=np.int32)
    new_total = int(counts[n_old:].sum())
    if n_old == 1:
        # Node 0's bit-1 side is empty: hang the subtree there; the old word's path stays.
        site = None
        prefix_points = np.array([0], dtype=np.int32)
        prefix_codes = np.array([1], dtype=np.uint8)
        old_paths = [(tree.point(0), tree.code(0))]
    else:
        site = graft_site(tree, counts)
        junction = n_words - 2
        if site == ROOT:
            old_count = int(counts[:n_old].sum())
            junction_path, junction_code = np.zeros(0, np.int32), np.zeros(0, np.uint8)
        else:
            old_count = int(counts[site])
            junction_path, junction_code = tree.point(site), tree.code(site)
        old_bit, new_bit = (1, 0) if new_total < old_count else (0, 1)
        prefix_points = np.append(junction_path, junction).astype(np.int32)
        prefix_codes = np.append(junction_code, new_bit).astype(np.uint8)
        old_paths = []
        for w in range(n_old):
            points, codes = tree.point(w), tree.code(w)
            if site == ROOT:
                points, codes = np.append(junction, points), np.append(old_bit, codes)
            elif w == site:
                points, codes = np.append(points, junction), np.append(codes, old_bit)
            old_paths.append((points, codes))
    new_lengths = len(prefix_points) + sub_lengths
    lengths = np.concatenate([[len(p) for p, _ in old_paths], new_lengths]).astype(np.int32)
    width = int(lengths.max())
    codes = np.zeros((n_words, width), dtype=np.uint8)
    points = np.zeros((n_words, width), dtype=np.int32)
    for w, (p, c) in enumerate(old_paths):
        points[w, : len(p)] = p
        codes[w, : len(c)] = c
    k = len(prefix_points)
    points[n_old:, :k] = prefix_points
    codes[n_old:, :k] = prefix_codes
    points[n_old:, k : k + sub_points.shape[1]] = sub_points
    codes[n_old:, k : k + sub_codes.shape[1]] = sub_codes
    padding = np.arange(width)[None, :] >= new_lengths[:, None]
    points[n_old:][padding] = 0  # the subtree's padding was shifted with its ids
    return Tree(codes=codes, points=points, lengths=lengths), site


def update_vocabulary(model, trim_rule=None, min_count=None, sample=None, dry_run=False):
    """``prepare_vocab(update=True)`` of :class:`hsw2v.Word2Vec`: merge the new scan
    (``model.raw_vocab``) into the model's vocabulary and graft the new words onto its tree
    (module docstring). Returns gensim's report dict; ``dry_run`` changes nothing.

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "a"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1)
    >>> model.build_vocab([["a", "c", "c"]] * 10, update=True)
    >>> model.wv.index_to_key, int(model.wv.get_vecattr("a", "count"))
    (['a', 'b', 'c'], 30)
    """
    if model.tree is None or not len(model.wv.index_to_key):
        raise RuntimeError(
            "You cannot do an online vocabulary-update of a model which has no prior "
            "vocabulary. First build the vocabulary of your model with a corpus before doing "
            "an online update."
        )
    if model.raw_vocab is None:
        raise RuntimeError("call scan_vocab() (or build_vocab()) before prepare_vocab()")
    min_count = model.effective_min_count if min_count is None else min_count
    sample = model.sample if sample is None else sample
    wv = model.wv
    new_words, new_counts = [], []
    pre_exist = pre_exist_total = drop_unique = drop_total = 0
    for word, count in model.raw_vocab.items():
        if not keep_vocab_item(word, count, min_count, trim_rule):
            drop_unique += 1
            drop_total += count
        elif word in wv.key_to_index:
            pre_exist += 1
            pre_exist_total += count
        else:
            new_words.append(word)
            new_counts.append(count)
    new_counts = np.asarray(new_counts, dtype=np.int64)
    if model.sorted_vocab and len(new_words):
        order = np.argsort(-new_counts, kind="stable")  # first-seen order on ties
        new_words = [new_words[i] for i in order]
        new_counts = new_counts[order]
    old_counts = np.asarray(wv.expandos["count"], dtype=np.int64).copy()
    for i, word in enumerate(wv.index_to_key):  # gensim: every existing word's count grows
        old_counts[i] += model.raw_vocab.get(word, 0)
    counts = np.concatenate([old_counts, new_counts])
    sample_int, downsampled = keep_probabilities(counts, sample)
    null = wv.key_to_index.get(NULL_WORD) if model.null_word else None
    if null is not None:
        sample_int[null] = 0
    report = {
        "drop_unique": drop_unique,
        "retain_total": int(new_counts.sum()) + pre_exist_total,
        "downsample_unique": int((sample_int < 2**32 - 1).sum()),
        "downsample_total": int(downsampled),
        "num_retained_words": len(new_words) + pre_exist,
        "num_new_words": len(new_words),
    }
    if dry_run:
        return report
    tree, site = grow_huffman_tree(model.tree, counts)
    wv.index_to_key.extend(new_words)
    for i, word in enumerate(new_words, start=len(old_counts)):
        wv.key_to_index[word] = i
    extras = {k: v for k, v in wv.expandos.items() if k not in ("code", "point")}
    extras["count"] = counts
    extras["sample_int"] = sample_int.astype(np.uint32)
    for name, values in list(extras.items()):
        if len(values) < len(counts):  # other per-word attributes: default-filled
            grown = np.zeros(len(counts), dtype=np.asarray(values).dtype)
            grown[: len(values)] = values
            extras[name] = grown
    wv.expandos = extras
    model.sample = sample
    model._install_tree(tree, model.semantic_pending)
    if not new_words:  # nothing grafted: the tree is unchanged
        where = "no new words, the tree is unchanged"
    elif site == ROOT:
        where = "new words grafted above the old root"
    else:
        where = f"new words grafted at old leaf #{site}"
    logger.info(
        "added %i new unique words and increased the count of %i pre-existing words; %s",
        len(new_words),
        pre_exist,
        where,
    )
    return report


def grow_weights(model) -> None:
    """``prepare_weights(update=True)``: keep every old row of ``wv.vectors`` and of each
    objective's output matrix (``syn1``, ``syn1neg``; :mod:`hsw2v.running.objectives`); new words
    get gensim's seeded random vectors, new inner nodes and new negative-sampling rows zero
    rows (as gensim's).

    Examples
    --------
    >>> from hsw2v import Word2Vec
    >>> model = Word2Vec([["a", "b", "a"]] * 10, vector_size=4, min_count=1, workers=1, epochs=1)
    >>> before = model.wv.vectors.copy()
    >>> model.build_vocab([["c", "d"]] * 10, update=True)
    >>> bool((model.wv.vectors[:2] == before).all()), model.syn1.shape
    (True, (4, 4))
    """
    if not len(model.wv.vectors):
        raise RuntimeError(
            "You cannot do an online vocabulary-update of a model which has no prior "
            "vocabulary. First build the vocabulary of your model with a corpus before doing "
            "an online update."
        )
    n, d = len(model.wv.index_to_key), model.vector_size
    n_old = len(model.wv.vectors)
    if n_old == n:
        return
    rng = np.random.default_rng(seed=model.seed)
    vectors = rng.random((n, d), dtype=np.float32)
    vectors *= 2.0
    vectors -= 1.0
    vectors /= d
    vectors[:n_old] = model.wv.vectors
    model.wv.vectors = vectors
    model._weights_changed()
    grow_matrices(model, n)
