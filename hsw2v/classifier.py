"""A scikit-learn classifier over many classes: a linear model ``h = x W_in`` under a
hierarchical-softmax output layer (:class:`hsw2v.layer.HierarchicalSoftmax`), trained by SGD
as fastText's supervised mode (Joulin et al., "Bag of Tricks for Efficient Text
Classification", 2017).

The estimator follows scikit-learn's contract (``get_params``/``set_params``, ``fit``,
``partial_fit``, ``predict``, ``predict_proba``, ``score``, ``classes_``, ``n_features_in_``)
so it works in a ``Pipeline``, in ``cross_val_score`` and in grid searches; every method takes
features ``X`` (dense or CSR, n x m). scikit-learn is an optional dependency
(``pip install "scikit-learn>=1.6"``), imported by this module only.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import type_of_target
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
except ImportError as exc:  # an optional dependency: say how to get it
    raise ImportError(
        "HierarchicalSoftmaxClassifier needs scikit-learn 1.6 or later: pip install "
        f"'scikit-learn>=1.6' (or, from a source checkout, pip install '.[sklearn]') ({exc})"
    ) from exc

from hsw2v.divergence import TrainingDivergedError
from hsw2v.label_trees import label_tree
from hsw2v.layer import HierarchicalSoftmax
from hsw2v.layer._args import OPTIMIZERS, checked_features
from hsw2v.running.schedule import Schedule

__all__ = ["HierarchicalSoftmaxClassifier", "encode_labels"]

TREES = ("huffman", "balanced", "kmeans")
BACKOFFS = 8  # times an epoch that diverged is retried, at a step size 10 times smaller each


class HierarchicalSoftmaxClassifier(ClassifierMixin, BaseEstimator):
    """Linear classifier with a hierarchical-softmax output, for problems with very many
    classes (thousands to millions): training costs ``O(dim log V)`` per example and
    :meth:`predict` a best-first search of the tree instead of scoring all ``V`` classes.

    The defaults of ``dim``, ``epochs`` and ``lr`` are the best of a grid on 500,000 rows of
    the next-word benchmark task (10,000 classes; ``benchmarks/probes/classifier_defaults.py``,
    numbers in ``benchmarks/RESULTS.md``): more epochs, a larger ``dim`` (128, 256) or other
    step sizes gained at most 0.1 point of precision at 1 for up to twice the fitting time.

    Parameters
    ----------
    dim : int, default=64
        Size of the hidden vector ``h = x W_in``.
    epochs : int, default=3
        Passes over the training data in :meth:`fit` (at most: early stopping may end sooner).
    lr : float, default=0.1
        Initial step size; it falls linearly to ``min_lr`` over ``epochs``.
    min_lr : float, default=0.0
        Final step size of :meth:`fit`. :meth:`partial_fit` steps with ``lr`` throughout.
    tree : {"huffman", "balanced", "kmeans"}, default="kmeans"
        The label tree (:func:`hsw2v.label_trees.label_tree`): learned from the features
        (recursive balanced 2-means of the classes' feature centroids, each cut at half the
        class-frequency mass, as probabilistic label trees build them), Huffman over the
        class frequencies (frequent classes get short paths), or balanced.
    fit_intercept : bool, default=True
        Learn one bias per inner node of the tree (the layer's ``intercept``). The defaults
        ``tree="kmeans", fit_intercept=True`` were the best measured on the next-word
        benchmark at 1,000 and 10,000 classes (docs/choosing-classes.md).
    root_width : int or None, default=32
        Replace the tree's top levels by one softmax over this many children (the layer's
        wide root, :mod:`hsw2v.layer._root`; capped at the number of classes, where the model
        is a flat softmax): more accurate than the binary root, at ``root_width`` more dot
        products per training example. None keeps the binary tree. Trained by
        ``optimizer="sgd"`` only. 32 was measured on the next-word benchmark: +0.3 points of
        precision at 1 at 10,000 classes for 1.4 times the training time per epoch, +0.7 at
        1,000 classes for 1.7 times; 256 gave +0.6 and +1.25 for 3 and 8 times
        (docs/choosing-classes.md).
    validation_fraction : float or None, default=None
        Fraction of the training rows held out to score each epoch (mean log-loss) for early
        stopping; the weights of the best epoch are kept. None: no hold-out, and the stopping
        rule watches the training loss instead.
    n_iter_no_change : int, default=3
        Stop after this many epochs without an improvement of at least ``tol``.
    tol : float, default=1e-4
        Least improvement of the watched loss that counts.
    workers : int, default=1
        Training threads (lock-free Hogwild updates). ``workers=1`` with a fixed
        ``random_state`` reproduces bit for bit; more workers are faster but not reproducible.
    job_size : int, default=1000
        Examples per job handed to a worker.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial weights, the shuffling, the hold-out split and the weighted sampling.
    verbose : int, default=0
        Print one line per epoch (losses, hold-out accuracy, time) to stdout when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted (in first-seen order when they cannot be sorted).
    n_features_in_ : int
        Number of features seen in :meth:`fit`.
    layer_ : HierarchicalSoftmax
        The fitted layer: tree, ``weights`` and ``input_weights``, class ``i`` being
        ``classes_[i]``.
    n_iter_ : int
        Epochs run by the last :meth:`fit` (or :meth:`partial_fit` calls made).
    loss_curve_ : list of float
        Mean training loss of each epoch.
    validation_loss_ : list of float
        Mean log-loss on the hold-out after each epoch (empty without
        ``validation_fraction``).

    Examples
    --------
    >>> import numpy as np
    >>> from hsw2v import HierarchicalSoftmaxClassifier
    >>> X = np.eye(4).repeat(25, axis=0)
    >>> y = np.array(["cat", "dog", "eel", "fox"]).repeat(25)
    >>> clf = HierarchicalSoftmaxClassifier(dim=8, epochs=20, random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), clf.predict(np.eye(4)).tolist()
    (['cat', 'dog', 'eel', 'fox'], ['cat', 'dog', 'eel', 'fox'])
    >>> labels, p = clf.predict_topk(np.eye(4)[:1], k=2)
    >>> str(labels[0, 0]), p.shape
    ('cat', (1, 2))
    """

    def __init__(
        self,
        dim=64,
        epochs=3,
        lr=0.1,
        min_lr=0.0,
        tree="kmeans",
        fit_intercept=True,
        root_width=32,
        optimizer="sgd",
        validation_fraction=None,
        n_iter_no_change=3,
        tol=1e-4,
        workers=1,
        job_size=1000,
        random_state=None,
        verbose=0,
    ):
        self.dim = dim
        self.epochs = epochs
        self.lr = lr
        self.min_lr = min_lr
        self.tree = tree
        self.fit_intercept = fit_intercept
        self.root_width = root_width
        self.optimizer = optimizer
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.workers = workers
        self.job_size = job_size
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ training
    def fit(self, X, y, sample_weight=None):
        """Train on features ``X`` (dense or CSR, n x m) and labels ``y`` (any hashable
        values, at least two distinct) from scratch.

        ``sample_weight`` (non-negative, one per row) is honoured by sampling: each epoch
        draws ``n`` rows with probability proportional to the weights (with replacement), so
        the expected gradient is that of the weighted loss; zero-weight rows are never
        trained on. Uniform weights train exactly as no weights.
        """
        self._check_params()
        X, y = validate_data(
            self, checked_features(X), y, accept_sparse="csr", dtype=np.float32, order="C", reset=True
        )
        codes, classes = encode_labels(y)
        _check_targets(classes, len(codes))
        weights = self._sample_weight(sample_weight, X, codes, len(classes))
        self.classes_ = classes
        if len(classes) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes in y, got 1 class "
                f"({classes[0]!r})"
            )
        rng = check_random_state(self.random_state)
        seed = int(rng.randint(np.iinfo(np.int32).max))
        self.layer_ = self._new_layer(codes, len(classes), X, seed)
        self.loss_curve_, self.validation_loss_ = [], []
        held_out = None
        n = X.shape[0]
        if self.validation_fraction is not None:
            n_val = int(round(self.validation_fraction * n))
            if n_val < 1 or n - n_val < 1:
                raise ValueError(
                    f"validation_fraction={self.validation_fraction} leaves {n_val} of {n} "
                    "rows to validate on and the rest to train on: both need at least one row"
                )
            perm = rng.permutation(n)
            val, train = np.sort(perm[:n_val]), np.sort(perm[n_val:])
            held_out = (X[val], codes[val])
            X, codes = X[train], codes[train]
            weights = None if weights is None else weights[train]
        self.n_iter_ = 0
        self._train(X, codes, weights, held_out, rng, self.epochs, final_lr=self.min_lr)
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over the batch ``(X, y)`` at step size ``lr``, going on from the weights
        as they are. The first call needs ``classes`` (every label that will ever come); the
        Huffman tree takes the class frequencies of that first batch (plus one each)."""
        first = not hasattr(self, "layer_")
        if first:
            self._check_params()
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
        X, y = validate_data(
            self, checked_features(X), y, accept_sparse="csr", dtype=np.float32, order="C", reset=first
        )
        if first:
            _, all_classes = encode_labels(np.asarray(classes).ravel())
            _check_targets(all_classes, len(all_classes))
            if len(all_classes) < 2:
                raise ValueError(
                    f"{type(self).__name__} needs at least 2 classes, classes= holds "
                    f"{len(all_classes)} class"
                )
            self.classes_ = all_classes
        elif classes is not None:
            _, given = encode_labels(np.asarray(classes).ravel())
            if len(given) != len(self.classes_) or not all(
                a == b for a, b in zip(given, self.classes_, strict=True)
            ):
                raise ValueError(
                    f"classes={given!r} differs from the classes of the first call to "
                    f"partial_fit ({self.classes_!r})"
                )
        codes = self._codes(y)
        weights = self._sample_weight(sample_weight, X, codes, len(self.classes_))
        rng = check_random_state(self.random_state)
        if first:
            seed = int(rng.randint(np.iinfo(np.int32).max))
            self.layer_ = self._new_layer(codes, len(self.classes_), X, seed)
            self.loss_curve_, self.validation_loss_ = [], []
            self.n_iter_ = 0
        # a different shuffle per call, reproducible from random_state and the call number
        rng = np.random.RandomState([int(rng.randint(np.iinfo(np.int32).max)), self.n_iter_])
        self._train(X, codes, weights, None, rng, 1, final_lr=self.lr)
        return self

    def _train(self, X, codes, weights, held_out, rng, epochs, final_lr):
        """``epochs`` epochs of the layer's SGD, the step size falling linearly from
        ``lr`` to ``final_lr`` over them, with early stopping and progress lines."""
        layer = self.layer_
        seed = layer.seed
        n = X.shape[0]
        best, best_weights, stale = np.inf, None, 0
        backoffs = 0  # the step size is 10**-backoffs times the schedule's: counted in integers
        # the one linear schedule (hsw2v.running.schedule), over epochs of one unit each
        schedule = Schedule(self.lr, final_lr, epochs=epochs, total=1, by_words=True)
        try:
            for epoch in range(epochs):
                t0 = time.perf_counter()
                a0, a1 = schedule.job_alphas(epoch, 0, 1)  # this epoch's first and last rate
                Xe, ye = X, codes
                if weights is not None:
                    rows = np.sort(rng.choice(n, size=n, p=weights))
                    Xe, ye = X[rows], codes[rows]
                # the layer shuffles by (seed, epoch 0) in each one-epoch call: a new seed per
                # epoch gives a new order (the input matrix was seeded at the first call)
                layer.seed = int(rng.randint(np.iinfo(np.int32).max))
                while True:
                    scale = 10.0**-backoffs
                    try:
                        layer.fit(Xe, ye, epochs=1, lr=a0 * scale, min_lr=a1 * scale,
                                  workers=self.workers, job_size=self.job_size,
                                  optimizer=self.optimizer)  # fmt: skip
                        break
                    except TrainingDivergedError as exc:  # the layer restored the weights
                        if backoffs >= BACKOFFS:
                            raise TrainingDivergedError(
                                f"{exc.args[0].split(':')[0]} even at lr={a0 * scale:g}, "
                                f"{BACKOFFS} times ten times lower than scheduled: the "
                                "features are too large or not finite in effect. Scale them "
                                "(e.g. StandardScaler or unit-norm rows) or lower lr; the "
                                "weights are those before the diverging epoch",
                                nonfinite_rows=exc.nonfinite_rows,
                                epoch=self.n_iter_,
                            ) from None
                        backoffs += 1
                        scale = 10.0**-backoffs
                        how = (
                            "its mean loss grew more than tenfold"
                            if getattr(exc, "cause", "") == "growth"
                            else "its loss became NaN or infinite"
                        )
                        warnings.warn(
                            f"{exc.args[0].split(':')[0]} at lr={a0 * scale * 10:g} ({how}): "
                            f"the epoch is run again at lr={a0 * scale:g} (and the rest of the "
                            "schedule 10 times lower). To avoid this, lower lr (on "
                            "standardized dense features, e.g. lr=0.01), or scale the "
                            "features (StandardScaler, or unit-norm rows)",
                            RuntimeWarning,
                            stacklevel=3,
                        )
                self.n_iter_ += 1
                self.loss_curve_.append(layer.history[-1])
                watched = self.loss_curve_[-1]
                line = f"epoch {self.n_iter_}: train loss {watched:.4f}"
                if held_out is not None:
                    H = layer.transform(held_out[0])
                    watched = float(-layer.log_prob(H, held_out[1]).mean())
                    self.validation_loss_.append(watched)
                    accuracy = float((layer.topk(H, 1)[0][:, 0] == held_out[1]).mean())
                    line += f", validation loss {watched:.4f}, accuracy {accuracy:.4f}"
                if self.verbose:
                    print(f"{line}, lr {a0:.4g} -> {a1:.4g}, {time.perf_counter() - t0:.2f} s",
                          file=sys.stdout, flush=True)  # fmt: skip
                if watched < best - self.tol:
                    best, stale = watched, 0
                    if held_out is not None:
                        best_weights = self._weights_copy()
                else:
                    stale += 1
                    if stale >= self.n_iter_no_change:
                        if self.verbose:
                            print(f"no improvement of {self.tol:g} in {stale} epochs: stopped",
                                  file=sys.stdout, flush=True)  # fmt: skip
                        break
        finally:
            layer.seed = seed
        if best_weights is not None and self.validation_loss_[-1] > best:
            for name, value in best_weights.items():
                getattr(layer, name)[...] = value

    def _weights_copy(self) -> dict:
        names = ("weights", "input_weights", "intercept", "root_weights", "root_intercept")
        return {
            name: getattr(self.layer_, name).copy()
            for name in names
            if getattr(self.layer_, name, None) is not None
        }

    def _new_layer(self, codes, n_classes, X, seed) -> HierarchicalSoftmax:
        tree = label_tree(self.tree, codes, n_classes, X, seed=seed)
        return HierarchicalSoftmax(tree, self.dim, seed, intercept=bool(self.fit_intercept),
                                   root_width=self.root_width)

    # ------------------------------------------------------------------ prediction
    def predict(self, X):
        """The most probable class of each row of features ``X`` (best-first search of the
        tree: ``O(dim log V)`` per row for a confident model, not ``O(dim V)``)."""
        H = self._hidden(X)
        return self.classes_[self.layer_.topk(H, 1)[0][:, 0]]

    def predict_proba(self, X):
        """``P(class | x)`` of every class (columns in the order of ``classes_``), float64
        n x n_classes; the peak memory is the output plus a bounded scratch."""
        H = self._hidden(X)
        return self.layer_.proba(H)

    def predict_log_proba(self, X):
        """``log P(class | x)`` of every class, float64 n x n_classes (exact, no log of a
        rounded probability)."""
        H = self._hidden(X)
        return self.layer_.log_proba(H)

    def predict_topk(self, X, k=5):
        """The ``k`` most probable classes of each row and their probabilities, most probable
        first: ``(labels n x k, probabilities float64 n x k)``, by best-first search (exact,
        without computing the whole distribution)."""
        H = self._hidden(X)
        idx, p = self.layer_.topk(H, k)
        return self.classes_[idx], p

    def _hidden(self, X) -> np.ndarray:
        check_is_fitted(self, "layer_")
        X = validate_data(
            self, checked_features(X), accept_sparse="csr", dtype=np.float32, order="C",
            reset=False,
        )
        return self.layer_.transform(X)

    # ------------------------------------------------------------------ helpers
    def _check_params(self):
        def integer(name, low):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")

        for name in ("dim", "epochs", "workers", "job_size", "n_iter_no_change"):
            integer(name, 1)
        lr, min_lr = self.lr, self.min_lr
        if not (np.isfinite(lr) and lr > 0 and np.isfinite(min_lr) and 0 <= min_lr <= lr):
            raise ValueError(f"need lr > 0 and 0 <= min_lr <= lr, got lr={lr}, min_lr={min_lr}")
        if self.tree not in TREES:
            raise ValueError(f"tree must be one of {TREES}, got {self.tree!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.root_width is not None:
            integer("root_width", 2)
            if self.optimizer != "sgd":
                raise ValueError(
                    f"root_width={self.root_width} is trained by optimizer='sgd' only, got "
                    f"optimizer={self.optimizer!r}: drop one of the two"
                )
        fraction = self.validation_fraction
        if fraction is not None and not (0 < fraction < 1):
            raise ValueError(f"validation_fraction must be None or in (0, 1), got {fraction!r}")
        if not (np.isfinite(self.tol) and self.tol >= 0):
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}")

    def _codes(self, y) -> np.ndarray:
        """Class ids of the labels ``y`` against ``classes_``; unknown labels are refused."""
        classes = self.classes_
        if classes.dtype == object or np.asarray(y).dtype == object:
            index = {c: i for i, c in enumerate(classes.tolist())}
            try:
                return np.fromiter((index[v] for v in np.asarray(y).tolist()), np.int64, len(y))
            except KeyError as exc:
                raise ValueError(f"y holds the label {exc.args[0]!r}, not in classes_") from None
        y = np.asarray(y)
        codes = np.searchsorted(classes, y)
        bad = (codes >= len(classes)) | (classes[np.minimum(codes, len(classes) - 1)] != y)
        if bad.any():
            raise ValueError(f"y holds the label {y[bad][0].tolist()!r}, not in classes_")
        return codes.astype(np.int64)

    @staticmethod
    def _sample_weight(sample_weight, X, codes, n_classes):
        """Sampling probabilities from ``sample_weight``, or None when the weights are
        uniform (training is then exactly as without weights)."""
        if sample_weight is None:
            return None
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.isfinite(w).all():
            raise ValueError("sample_weight holds NaN or infinite values")
        total = w.sum()
        if total <= 0:
            raise ValueError("sample_weight sums to 0: at least one row must count")
        weighted_classes = np.count_nonzero(np.bincount(codes, weights=w, minlength=n_classes))
        if weighted_classes < 2 <= n_classes:
            raise ValueError(
                "sample_weight leaves 1 class with positive weight: a classifier needs at "
                "least 2 classes to train on"
            )
        if np.all(w == w[0]):
            return None
        return w / total

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def encode_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """``(codes int64, classes)`` with ``classes[codes] == y``: NumPy's sort-based
    ``np.unique`` for numbers; for strings and object arrays (any hashable labels) one dict
    pass in first-seen order, then only the distinct labels are sorted (first-seen order is
    kept when they cannot be compared), so a million string labels are never sorted. On a
    million labels of 10,000 distinct strings it is 4 to 12 times faster than ``np.unique``
    of the object array (``benchmarks/RESULTS.md``).

    Examples
    --------
    >>> codes, classes = encode_labels(np.array(["b", "a", "b", "c"], dtype=object))
    >>> codes.tolist(), classes.tolist()
    ([1, 0, 1, 2], ['a', 'b', 'c'])
    """
    y = np.asarray(y)
    if y.dtype.kind not in "OU":
        classes, codes = np.unique(y, return_inverse=True)
        return codes.reshape(-1).astype(np.int64), classes
    index: dict = {}
    codes = np.fromiter(
        (index.setdefault(v, len(index)) for v in y.tolist()), dtype=np.int64, count=len(y)
    )
    seen = list(index)
    try:
        order = sorted(range(len(seen)), key=seen.__getitem__)
    except TypeError:  # labels that cannot be compared (e.g. strings and numbers)
        order = list(range(len(seen)))
    rank = np.empty(len(seen), dtype=np.int64)
    rank[order] = np.arange(len(seen))
    classes = np.empty(len(seen), dtype=object)
    classes[:] = [seen[i] for i in order]
    if y.dtype.kind == "U":  # fixed-width strings stay so, as np.unique would give them
        classes = classes.astype(y.dtype)
    return rank[codes], classes


def _check_targets(classes, n_samples: int) -> None:
    """scikit-learn's check_classification_targets, asked of the distinct labels only (it
    would sort the whole of ``y`` again): discrete labels, and its warning when more than half
    of the rows have a class of their own."""
    kind = type_of_target(classes, input_name="y")
    if kind not in ("binary", "multiclass"):
        raise ValueError(
            f"Unknown label type: {kind}. Maybe you are trying to fit a classifier, which "
            "expects discrete classes on a regression target with continuous values."
        )
    if n_samples > 20 and len(classes) > round(0.5 * n_samples):
        warnings.warn(
            "The number of unique classes is greater than 50% of the number of samples. `y` "
            "could represent a regression problem, not a classification problem.",
            UserWarning,
            stacklevel=3,
        )
