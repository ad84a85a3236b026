"""Word2Vec's training driver: ``train()`` as a few named steps.

:class:`TrainingMixin` holds :meth:`~hsw2v.Word2Vec.train` and its helpers. A call checks
its arguments, makes the call's settings the model's and the learning-rate
:class:`~hsw2v.running.schedule.Schedule`, builds the kernel's trainer once
(:func:`hsw2v.running.trainer.make_trainer`), picks where each epoch's jobs come from (the
workers' byte ranges of a ``corpus_file`` or the corpus iterable, read or replayed from
memory: :mod:`hsw2v.running.passes`), runs the epochs with their callbacks
(:mod:`hsw2v.running.epochs` runs one epoch on the worker threads), and for ``tree="semantic"``
trains a second time over the tree rebuilt from the learned vectors.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from hsw2v import progress as _progress
from hsw2v._guard import Guard, training
from hsw2v.divergence import TrainingDivergedError, count_nonfinite_rows, describe_rows
from hsw2v.exceptions import EmptyCorpusError
from hsw2v.running.ctrl_c import ctrl_c_latch, raise_if_dropped
from hsw2v.running.epochs import iter_jobs, warn_count_mismatch
from hsw2v.running.file_scan import file_mode_path
from hsw2v.running.objectives import active, tree_hot_rows
from hsw2v.running.passes import FilePasses, epoch_passes
from hsw2v.running.schedule import Schedule
from hsw2v.running.trainer import (
    check_training_vocabulary,
    make_trainer,
    walk_variant,
)
from hsw2v.trees import semantic_tree

logger = logging.getLogger("hsw2v.word2vec")  # the model's log, as users know it


class TrainingMixin:
    """The training methods of :class:`hsw2v.Word2Vec` (it holds the state they use)."""

    def train(
        self,
        corpus_iterable=None,
        corpus_file=None,
        total_examples=None,
        total_words=None,
        epochs=None,
        start_alpha=None,
        end_alpha=None,
        word_count=0,
        queue_factor=2,
        report_delay=1.0,
        compute_loss=False,
        callbacks=(),
        progress=False,
        **kwargs,
    ):
        """Train over the corpus; returns ``(trained_words, raw_words)`` where trained words
        are the tokens left after subsampling, summed over epochs (gensim's convention).

        As in gensim, ``epochs`` and one of ``total_examples`` / ``total_words`` are
        required, so that the learning rate can decay linearly over the whole run.

        Progress is logged (``logging`` at INFO) every ``report_delay`` seconds, as gensim
        does. ``progress=True`` also draws a tqdm bar (``pip install tqdm``);
        any callable is instead called with a :class:`hsw2v.running.epochs.Progress` a few times a
        second, in the calling thread. After each epoch, ``min_alpha_yet_reached`` holds the
        learning rate reached and ``latest_epoch_report`` the epoch's
        :class:`hsw2v.running.epochs.EpochReport` (see :class:`hsw2v.callbacks.TrainingHistory`).

        Parameters
        ----------
        corpus_iterable : iterable of list of str, optional
            The sentences; re-iterable when ``epochs > 1``.
        corpus_file : str or os.PathLike, optional
            A local text file in :class:`hsw2v.LineSentence` format, read by the worker
            threads themselves (give exactly one of `corpus_iterable` and `corpus_file`).
        total_examples : int, optional
            Number of sentences in the corpus (usually ``model.corpus_count``).
        total_words : int, optional
            Number of raw words in the corpus (usually ``model.corpus_total_words``); one of
            `total_examples` and `total_words` is required.
        epochs : int
            Passes over the corpus (usually ``model.epochs``); required.
        start_alpha, end_alpha : float, optional
            Learning rate at the start and end of this call (default: ``alpha`` and
            ``min_alpha``); they become the model's.
        word_count, queue_factor : int, optional
            Accepted for gensim compatibility; not used.
        report_delay : float, optional
            Seconds between two progress log lines.
        compute_loss : bool, optional
            Accumulate the training loss (:meth:`get_latest_training_loss`).
        callbacks : iterable of :class:`hsw2v.callbacks.CallbackAny2Vec`, optional
            Called at the start and end of training and of each epoch.
        progress : bool or callable, optional
            ``True`` draws a tqdm bar; a callable receives progress reports.

        Returns
        -------
        tuple of int
            ``(trained_words, raw_words)``, summed over the epochs.

        Raises
        ------
        RuntimeError
            If the vocabulary has not been built.
        ValueError
            If `epochs` or both `total_examples` and `total_words` are missing, or
            ``epochs < 1``.
        TypeError
            If the corpus is a one-shot iterator (a generator) and ``epochs > 1``.
        hsw2v.divergence.TrainingDivergedError
            If the weights stop being finite (a learning rate far too high).

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> sentences = [["a", "b", "a"]] * 20
        >>> model = Word2Vec(vector_size=8, min_count=1, workers=1, sample=0)
        >>> model.build_vocab(sentences)
        >>> model.train(sentences, total_examples=model.corpus_count, epochs=2)
        (120, 120)
        """
        # the latch: a Ctrl-C during the call stops it, even one CPython drops (ctrl_c);
        # training() refuses a second train() and vocabulary changes meanwhile
        with ctrl_c_latch(), training(self):
            corpus = self._check_train_call(
                corpus_iterable, corpus_file, total_examples, total_words, epochs
            )
            epochs = int(epochs)
            callbacks = tuple(callbacks or ())
            kept_settings = self._call_settings()
            try:
                schedule = self._take_call_settings(
                    start_alpha, end_alpha, epochs, compute_loss, total_examples, total_words,
                    from_file=corpus_file is not None,
                )  # fmt: skip
                trainer = make_trainer(self)
            except BaseException:  # a refused call leaves the model as it was
                self.__dict__.update(kept_settings)
                raise
            logger.info(  # gensim's line, the one pasted into bug reports
                "training model with %d workers on %d vocabulary and %d features, using sg=%d "
                "hs=%d sample=%s negative=%d window=%d shrink_windows=%s",
                self.workers,
                len(self.wv),
                self.vector_size,
                int(self.sg),
                int(self.hs),
                self.sample,
                int(self.negative),
                self.window,
                bool(self.shrink_windows),
            )
            passes = self._epoch_passes(corpus, corpus_file, trainer, schedule)
            supplied = None if isinstance(passes, FilePasses) else (total_examples, total_words)
            guard = Guard(self)
            guard.freeze()
            try:
                trained, raw = self._run_epochs(
                    passes, schedule, callbacks, supplied, report_delay, progress, guard
                )
            finally:
                guard.thaw()
            self._record_call()
        for callback in callbacks:
            callback.on_train_end(self)
        if self._rebuild_semantic_tree():
            # the same training again over the new tree (see the class docstring)
            more = self.train(
                corpus_iterable,
                corpus_file,
                total_examples,
                total_words,
                epochs,
                start_alpha,
                end_alpha,
                word_count,
                queue_factor,
                report_delay,
                compute_loss,
                callbacks,
                progress,
                **kwargs,
            )
            return trained + more[0], raw + more[1]
        return trained, raw

    def _check_train_call(self, corpus_iterable, corpus_file, total_examples, total_words, epochs):
        """The corpus to train on, once the call and the model are checked fit to train."""
        corpus = self._corpus(corpus_iterable, corpus_file)
        if not len(self.wv.index_to_key):  # gensim's RuntimeError, in gensim's order
            raise RuntimeError("build the vocabulary first: call build_vocab(corpus)")
        if epochs is None:
            raise ValueError("you must specify an explicit epochs count, e.g. epochs=model.epochs")
        if not total_examples and not total_words:
            raise ValueError(
                "you must specify either total_examples or total_words, for proper learning "
                "rate decay; usually total_examples=model.corpus_count"
            )
        epochs = int(epochs)
        if epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {epochs}")
        if self.tree is None:  # model.wv assigned vectors, but no vocabulary was built
            check_training_vocabulary(self)
            raise ValueError(
                "the model has no tree over model.wv's words: model.wv was assigned rather "
                "than built. Build the vocabulary with build_vocab(corpus) (then "
                "intersect_word2vec_format() to start from pretrained vectors)"
            )
        if isinstance(corpus, Iterator) and epochs > 1:
            raise TypeError(
                f"the corpus is a one-shot iterator (e.g. a generator) but {epochs} epochs "
                "need as many passes: pass a re-iterable object such as a list or LineSentence"
            )
        if self.hs and self.negative:
            logger.warning(  # gensim's wording, which users grep for
                "Both hierarchical softmax and negative sampling are activated. "
                "This is probably a mistake. You should set either 'hs=0' "
                "or 'negative=0' to disable one of them. "
            )
        self._check_finite_weights()
        return corpus

    def _call_settings(self) -> dict:
        """The settings a ``train()`` call makes the model's (restored if it is refused)."""
        names = ("alpha", "min_alpha", "epochs", "compute_loss", "cum_table")
        return {name: self.__dict__[name] for name in names if name in self.__dict__}

    def _take_call_settings(
        self, start_alpha, end_alpha, epochs, compute_loss, total_examples, total_words,
        from_file=False,
    ) -> Schedule:
        """As gensim's train(): the call's settings become the model's (only the callbacks
        passed to the call are called; the constructor passes its own). Returns the call's
        learning-rate schedule, whose progress counts what gensim's counts: a ``corpus_file``'s
        words; a corpus iterable's sentences where ``total_examples`` is given (also beside
        ``total_words``, as the constructor gives both), else its words."""
        self.alpha = float(start_alpha or self.alpha)
        self.min_alpha = float(end_alpha or self.min_alpha)
        if self.alpha > getattr(self, "min_alpha_yet_reached", self.alpha):
            logger.warning("Effective 'alpha' higher than previous training cycles")  # gensim's
        self.epochs = epochs
        self.compute_loss = bool(compute_loss)
        by_words = bool(total_words) if from_file else not total_examples
        return Schedule(
            self.alpha,
            self.min_alpha,
            epochs,
            int(total_words) if by_words else int(total_examples),
            by_words=by_words,
            seed=self.seed,
        )

    def _epoch_passes(self, corpus, corpus_file, trainer, schedule):
        """Where each epoch's jobs come from (:func:`hsw2v.running.passes.epoch_passes`). The
        scan's token recording is used once: later calls read."""
        recorded = self._take_recording()
        path = file_mode_path(corpus_file)
        return epoch_passes(self, corpus, path, trainer, schedule, recorded)

    def _run_epochs(self, passes, schedule, callbacks, supplied, report_delay, progress, guard):
        """Train ``schedule.epochs`` epochs, calling the callbacks around the run and each
        epoch; returns ``(trained_words, raw_words)`` summed over the epochs."""
        self._start_loss_tally()
        self._weights_changed()
        trained = raw = 0
        on_progress = _progress.resolve(progress)
        started = time.perf_counter()
        for callback in callbacks:
            callback.on_train_begin(self)
        try:
            for epoch in range(schedule.epochs):
                for callback in callbacks:
                    callback.on_epoch_begin(self)
                raise_if_dropped()
                guard.check(f"before epoch {epoch + 1} of {schedule.epochs}")
                report = passes.run(epoch, report_delay, on_progress)
                self._record_epoch(schedule.alpha(epoch, schedule.total), report.loss)
                self.latest_epoch_report = report
                trained += report.trained_words
                raw += report.raw_words
                _log_epoch_end(epoch, report, supplied)
                if report.raw_words == 0:
                    raise EmptyCorpusError("the corpus yielded no sentences during training")
                for callback in callbacks:
                    callback.on_epoch_end(self)
            guard.check(f"after epoch {schedule.epochs} of {schedule.epochs}")
        except TrainingDivergedError as exc:
            raise self._diverged(exc.epoch, schedule.epochs) from None
        finally:
            elapsed = time.perf_counter() - started
            self._record_seconds(elapsed)
            self._weights_changed()
            if hasattr(on_progress, "close"):
                on_progress.close()
        logger.info(  # gensim's wording
            "training on %d raw words (%d effective words) took %.1fs, %.0f effective words/s",
            raw,
            trained,
            elapsed,
            trained / elapsed if elapsed > 0 else 0.0,
        )
        return trained, raw

    def _rebuild_semantic_tree(self) -> bool:
        """Second pass of ``tree="semantic"``: a new tree from the learned vectors and fresh
        weights over it (a fresh schedule too); True when it was rebuilt, and so the same
        training must run again."""
        if not (self.semantic_pending and len(self.wv.index_to_key) > 1):
            return False
        self._install_tree(semantic_tree(self.wv.vectors, seed=self.seed), semantic_pending=0)
        self.prepare_weights()
        self._restart_alpha_reached()
        return True

    def _skip_gram_walks(self) -> bool:
        """Whether each trained word walks its outputs once per context word, as skip-gram's
        word does (about 2 x window walks), rather than once (CBOW's centre word): how many
        private hot rows a job keeps and how often it syncs them
        (:mod:`hsw2v.running._tuning`)."""
        return bool(self.sg)

    def _hot_rows(self):
        """The inner nodes each job trains a private copy of (see ``HOT_NODES``): the most
        visited ones, none with one worker (:func:`hsw2v.running.objectives.tree_hot_rows`)."""
        return tree_hot_rows(self, self.workers)

    # The input side of the training step (``docs/architecture.md``, "Adding an input kind"):
    # Word2Vec's input rows are its word vectors; FastText overrides the first three,
    # Doc2Vec the document rows and the jobs that name them.
    def _input_matrix(self):
        """The matrix the kernel's input rows are rows of (trained in place)."""
        return self.wv.vectors

    def _input_subwords(self):
        """The input rows of each word beyond its own row: None (a word is its row)."""
        return None

    def _input_lockf(self):
        """The lock factors of the input rows (gensim's ``vectors_lockf``), by row."""
        return getattr(self.wv, "vectors_lockf", None)

    def _input_docs(self):
        """The document rows of the input: None (Doc2Vec gives ``(rows, lockf, dbow_words)``)."""
        return None

    def _corpus_jobs(self, corpus, n_words: int):
        """The jobs of one pass over a corpus iterable (:func:`hsw2v.running.epochs.iter_jobs`;
        Doc2Vec's carry each document's tag tokens)."""
        return iter_jobs(corpus, self.wv.key_to_index, self.batch_words, n_words)

    def _nonfinite_rows(self) -> dict:
        trained = {o.matrix: getattr(self, o.matrix) for o in active(self)}  # syn1, syn1neg
        return count_nonfinite_rows({"wv.vectors": self.wv.vectors, **trained})

    def _check_finite_weights(self) -> None:
        """Refuse to train weights that already hold NaN or inf (one pass over them)."""
        rows = self._nonfinite_rows()
        if any(rows.values()):
            raise ValueError(
                "the model's weights hold NaN or infinite values before training "
                f"(rows: {describe_rows(rows)}), e.g. from a model file or set by hand: "
                "fix those rows, or call model.prepare_weights() to start all weights afresh"
            )

    def _diverged(self, epoch: int, epochs: int) -> TrainingDivergedError:
        """The error for training that met non-finite weights (docs/robustness.md)."""
        rows = self._nonfinite_rows()
        return TrainingDivergedError(
            f"training diverged in epoch {epoch + 1} of {epochs}: the weights became NaN or "
            f"infinite at alpha={self.alpha:g}. Lower alpha: call model.prepare_weights() "
            f"and train again with e.g. start_alpha={self.alpha / 10:g} (or build a new "
            "model with that alpha). Every thread stopped after its current job; rows "
            f"holding NaN or inf: {describe_rows(rows)}",
            nonfinite_rows=rows,
            epoch=epoch,
        )

    def _walk_variant(self) -> str:
        return walk_variant(self)

    # The training record: ``train_count``, ``total_train_time``, ``running_training_loss`` and
    # ``min_alpha_yet_reached`` (gensim's names) are written by these methods only (the
    # constructor, train(), load(), the gensim conversion and distributed training call them;
    # tests/test_imports.py fails on a write elsewhere). Loading and the gensim conversion also
    # set the saved ones by name, with every saved setting (hsw2v.running.params).
    def _reset_training_record(self) -> None:
        """A model never trained: no call, no time, no loss, the schedule at its start."""
        self.min_alpha_yet_reached = self.alpha  # as gensim: lowered by each epoch trained
        self.train_count = 0
        self.total_train_time = 0.0
        self.running_training_loss = 0.0

    def _start_loss_tally(self) -> None:
        """A ``train()`` call's loss counts from zero (:meth:`get_latest_training_loss`)."""
        self.running_training_loss = 0.0

    def _record_epoch(self, alpha_reached: float, loss: float) -> None:
        """An epoch trained: the learning rate it reached, and its loss added to the call's."""
        self.min_alpha_yet_reached = alpha_reached
        self.running_training_loss += loss

    def _record_seconds(self, seconds: float) -> None:
        """Seconds spent training, added to the model's total (a refused epoch's too)."""
        self.total_train_time += seconds

    def _record_call(self) -> None:
        """One more ``train()`` call done, as gensim counts them."""
        self.train_count += 1

    def _record_run(self, calls: int, seconds: float, loss: float, alpha_reached: float) -> None:
        """A whole run recorded at once (distributed training: each epoch counts as a call):
        its calls and seconds added, its loss and the learning rate it reached taken."""
        self.train_count += calls
        self.total_train_time += seconds
        self.running_training_loss = loss
        self.min_alpha_yet_reached = alpha_reached

    def _restart_alpha_reached(self) -> None:
        """The schedule starts afresh (the semantic tree's second training)."""
        self.min_alpha_yet_reached = self.alpha

    def _restore_alpha_reached(self) -> None:
        """Where a loaded model's schedule got to, which a file does not save: the end of the
        last call's (``min_alpha``) once trained, else the start (``alpha``)."""
        self.min_alpha_yet_reached = self.min_alpha if self.train_count else self.alpha

    def _record_from_gensim(self, gensim_model) -> None:
        """The record taken from a gensim model (its saved counts already set by name): the
        loss as a Python float, and where gensim's schedule got to, when it says."""
        self.running_training_loss = float(self.running_training_loss)
        if hasattr(gensim_model, "min_alpha_yet_reached"):
            self.min_alpha_yet_reached = float(gensim_model.min_alpha_yet_reached)

    def _record_to_gensim(self, gensim_model) -> None:
        """Where the schedule got to, as a gensim model holds it (its counts set by name): a
        trained model's last call ended at ``min_alpha``."""
        if self.train_count:
            gensim_model.min_alpha_yet_reached = float(self.min_alpha)

    def get_latest_training_loss(self) -> float:
        """The summed -log-likelihood of all (context, path) pairs trained by the latest
        ``train()`` call with ``compute_loss=True``, accumulated in float64 per job (0.0
        without it).

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> sentences = [["a", "b", "a"]] * 20
        >>> model = Word2Vec(sentences, vector_size=8, min_count=1, workers=1, epochs=1,
        ...                  sample=0, compute_loss=True)
        >>> bool(model.get_latest_training_loss() > 0)
        True
        """
        return self.running_training_loss


def _log_epoch_end(epoch: int, report, supplied) -> None:
    """gensim's end-of-epoch log line, and its warnings when the corpus read differs from the
    ``(total_examples, total_words)`` supplied (None in corpus_file mode, which reads exact
    byte ranges, where gensim does not warn either). The wording is gensim 4.4's, which users
    grep for; epochs count from 1 as in hsw2v's progress lines."""
    logger.info(
        "EPOCH %i: training on %i raw words (%i effective words) took %.1fs, %.0f effective "
        "words/s",
        epoch + 1,
        report.raw_words,
        report.trained_words,
        report.seconds,
        report.trained_words / max(report.seconds, 1e-9),
    )
    if supplied is not None:
        warn_count_mismatch(epoch, report, *supplied)
