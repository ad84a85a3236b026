"""Training of :class:`hsw2v.layer.HierarchicalSoftmax`: ``fit`` (SGD or AdaGrad over the
nogil ``FitTrainer`` jobs, on Word2Vec's epoch driver) and its divergence restore.

A mixin: :class:`hsw2v.layer.HierarchicalSoftmax` inherits it, and it reads the layer's
``weights``, ``intercept``, ``input_weights``, ``seed``, ``history`` and input checks.
"""

from __future__ import annotations

import numpy as np

from hsw2v._kernels._layer import FitTrainer
from hsw2v.divergence import (
    GROWTH_LIMIT,
    TrainingDivergedError,
    count_nonfinite_rows,
    describe_rows,
    loss_grew,
)
from hsw2v.layer._args import OPTIMIZERS
from hsw2v.layer._args import positive_int as _positive_int
from hsw2v.running.epochs import Job, Schedule, run_epoch
from hsw2v.running.params import INT32_MAX


class LayerFitting:
    """``fit`` and its divergence restore, for :class:`hsw2v.layer.HierarchicalSoftmax`."""

    def fit(
        self,
        X,
        y,
        epochs: int = 5,
        lr: float = 0.1,
        min_lr: float = 0.0,
        workers: int = 1,
        job_size: int = 1000,
        optimizer: str = "sgd",
    ) -> LayerFitting:
        """Train the linear classifier ``h = x W_in`` and this layer by SGD, one example at a
        time, as fastText's supervised mode: ``X`` is a dense float array or a SciPy CSR
        matrix (n x m), ``y`` the n class ids. ``h`` is ``x`` times the ``m x dim`` input
        matrix ``input_weights`` (created uniform in ``[-1/dim, 1/dim)`` from ``seed`` on the
        first call; later calls go on from the weights as they are). For fastText's average
        of word vectors, give bag-of-words rows divided by their word count.

        The step size falls linearly from ``lr`` to ``min_lr`` over all epochs; examples are
        shuffled each epoch (seeded from ``seed`` and the epoch). ``workers`` threads run the
        nogil kernel on jobs of ``job_size`` examples, updating the weights without locks
        (Hogwild), with Word2Vec's epoch driver; ``workers=1`` runs the same jobs in the
        calling thread and is reproducible. ``history`` gets the mean
        loss of each epoch.

        ``optimizer="sgd"`` (the default) is word2vec's and fastText's plain SGD step.
        ``optimizer="adagrad"`` is row-wise AdaGrad (Duchi et al. 2011; one accumulated mean
        squared gradient per row of ``input_weights`` and per inner node, so ``m + V - 1``
        floats of state): every row steps by ``lr / sqrt(accumulator)`` times its gradient,
        the same linear schedule on top. The accumulators live on the layer, so later calls
        (the classifier's epochs, ``partial_fit``) go on with them; they start at zero with a
        new input matrix. See ``docs/layer.md`` for when it pays.

        Examples
        --------
        >>> from hsw2v import HierarchicalSoftmax
        >>> X = np.eye(4, dtype=np.float32)
        >>> layer = HierarchicalSoftmax.balanced(4, dim=4).fit(X, [0, 1, 2, 3], epochs=200,
        ...                                                   lr=0.5)
        >>> layer.topk(layer.transform(X), 1)[0].ravel().tolist()
        [0, 1, 2, 3]
        """
        epochs = _positive_int(epochs, "epochs", INT32_MAX)
        workers = _positive_int(workers, "workers", INT32_MAX)
        job_size = _positive_int(job_size, "job_size", INT32_MAX)
        lr, min_lr = float(lr), float(min_lr)
        if not (np.isfinite(lr) and lr > 0 and 0 <= min_lr <= lr):
            raise ValueError(f"need lr > 0 and 0 <= min_lr <= lr, got lr={lr}, min_lr={min_lr}")
        if optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
        if optimizer != "sgd" and self.root_weights is not None:
            raise ValueError(
                f"optimizer={optimizer!r} does not train a wide root (root_width="
                f"{len(self.root_weights)}): use optimizer='sgd', or a layer without root_width"
            )
        self._check_state()
        X = self._features(X, "fit")
        n, m = X.shape
        if isinstance(X, np.ndarray):
            inputs = {"dense": X}
        else:
            inputs = {
                "indptr": X.indptr.astype(np.int64),
                "indices": X.indices.astype(np.int32, copy=False),
                "data": X.data,
            }
        if n == 0 or m == 0:
            raise ValueError(f"X is empty (shape {(n, m)})")
        y = self._labels(y, n)
        if self.input_weights is None:
            rng = np.random.default_rng(self.seed)
            w = rng.random((m, self.dim), dtype=np.float32)
            self.input_weights = (w * 2.0 - 1.0) / self.dim
            self._adagrad = None
        elif self.input_weights.shape != (m, self.dim):
            raise ValueError(
                f"X has {m} features but the fitted input matrix has "
                f"{self.input_weights.shape[0]}: give the same features as before"
            )
        if optimizer != "sgd":
            w = 1 if optimizer == "rowwise-adagrad" else self.dim
            sizes = (m * w, len(self.weights) * (1 if w == 1 else self.dim + 1))
            if self._adagrad is None or (len(self._adagrad[0]), len(self._adagrad[1])) != sizes:
                self._adagrad = tuple(np.zeros(k, dtype=np.float32) for k in sizes)
            inputs["acc_in"], inputs["acc_node"] = self._adagrad
        trainer = FitTrainer(
            self.input_weights, self.weights, *self._tree_arrays(), y, bias=self.intercept,
            **inputs, **self._root_arrays()
        )
        schedule = Schedule(lr, min_lr, epochs, n, by_words=True)
        untrained = self._untrained_loss(y)
        for epoch in range(epochs):
            # kept to restore if this epoch diverges (docs/robustness.md); a copy per epoch
            # costs less than one pass over X
            before = (
                self.input_weights.copy(),
                self.weights.copy(),
                self._intercept_copy(),
                None if optimizer == "sgd" else tuple(a.copy() for a in self._adagrad),
                self._root_copy(),
            )
            perm = np.random.default_rng([self.seed, epoch]).permutation(n).astype(np.int32)
            jobs = [
                Job(
                    ids=perm[s : s + job_size],
                    ends=np.array([min(job_size, n - s)]),
                    raw_words=min(job_size, n - s),
                    n_sentences=min(job_size, n - s),
                )
                for s in range(0, n, job_size)
            ]
            try:
                if workers == 1:  # no threads to start: the kernel runs in this thread
                    done, loss = 0, 0.0
                    for job in jobs:
                        alphas = schedule.job_alphas(epoch, done, schedule.units(job))
                        done += schedule.units(job)
                        loss += trainer.train_job(job.ids, job.ends, *alphas)[1]
                        if not np.isfinite(loss):
                            raise TrainingDivergedError("non-finite loss", epoch=epoch)
                else:
                    loss = run_epoch(
                        trainer,
                        jobs,
                        epoch=epoch,
                        workers=workers,
                        schedule=schedule,
                        seed=self.seed,
                    ).loss
            except TrainingDivergedError:
                raise self._diverged(epoch, epochs, lr, before) from None
            best = min((h for h in self.history if np.isfinite(h)), default=np.inf)
            if loss_grew(loss / n, untrained, best):  # finite, but by orders of magnitude
                raise self._diverged(epoch, epochs, lr, before, grew=(loss / n, untrained, best))
            self.history.append(loss / n)
        return self

    def _untrained_loss(self, y) -> float:
        """The mean loss of the examples ``y`` with every weight zero: ``ln 2`` per node on
        each path (``ln K`` for a wide root of ``K`` children): the reference of
        :func:`hsw2v.divergence.loss_grew`."""
        codes, points, lengths = self._tree_arrays()
        nodes = float(np.mean(lengths[y])) if len(y) else 0.0
        root = np.log(len(self.root_weights)) if self.root_weights is not None else 0.0
        return float(root + np.log(2.0) * nodes)

    def _root_copy(self):
        """Copies of the wide root's weights and intercept (None for what is absent)."""
        return tuple(None if a is None else a.copy()
                     for a in (self.root_weights, self.root_intercept))

    def _diverged(self, epoch, epochs, lr, before, grew=None) -> TrainingDivergedError:
        """Restore the weights of before the diverging epoch and say what to change."""
        rows = count_nonfinite_rows({"input_weights": self.input_weights, "weights": self.weights,
                                     "root_weights": self.root_weights})
        if self.intercept is not None:
            rows["intercept"] = int(np.count_nonzero(~np.isfinite(self.intercept)))
            self.intercept[...] = before[2]
        self.input_weights[...] = before[0]
        self.weights[...] = before[1]
        if before[3] is not None:
            for acc, saved in zip(self._adagrad, before[3], strict=True):
                acc[...] = saved
        if self.root_weights is not None:
            for arr, saved in zip((self.root_weights, self.root_intercept), before[4],
                                  strict=True):
                if arr is not None:
                    arr[...] = saved
        if grew is None:
            what = "the loss became NaN or infinite"
        else:
            mean, untrained, best = grew
            what = (
                f"the mean loss grew to {mean:.3g}, more than {GROWTH_LIMIT:g} times that of "
                f"the untrained layer ({untrained:.3g})"
                + (f" and of the best epoch ({best:.3g})" if np.isfinite(best) else "")
            )
        return TrainingDivergedError(
            f"fit diverged in epoch {epoch + 1} of {epochs}: {what} "
            f"at lr={lr:g} (rows holding NaN or inf: {describe_rows(rows)}). Scale the "
            f"features (e.g. to unit variance) or lower lr (e.g. lr={lr / 10:g}). The weights "
            f"are restored to what they were before epoch {epoch + 1}, and `history` keeps "
            "the finite epochs only",
            nonfinite_rows=rows,
            epoch=epoch,
            cause="nonfinite" if grew is None else "growth",
        )
