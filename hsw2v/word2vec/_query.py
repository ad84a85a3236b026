"""Word2Vec's probability queries: the log-probability of sentences (:meth:`score`) and the
most probable centre words of a context (:meth:`predict_output_word`).

A mixin of :class:`hsw2v.Word2Vec`; the work is done beside the objective table, by
:mod:`hsw2v.running.objectives.hierarchical` (under the hierarchical-softmax tree; public name
``hsw2v.scoring``) and :mod:`hsw2v.running.objectives.negative` (gensim's softmax over
``syn1neg``; ``hsw2v.negative``).
"""

from __future__ import annotations

__all__ = ["QueryMixin"]


class QueryMixin:
    """The query methods of :class:`hsw2v.Word2Vec` (it holds the weights they read)."""

    def score(
        self, sentences, total_sentences=int(1e6), chunksize=100, queue_factor=2, report_delay=1
    ):
        """Log-probability of each sentence (float32 array), exact; see
        :func:`hsw2v.scoring.score_sentences`.

        Parameters
        ----------
        sentences : iterable of list of str
            The sentences to score; unknown words are skipped.
        total_sentences : int, optional
            Score at most this many sentences (a warning says when more were given).
        chunksize : int, optional
            Sentences per job handed to a worker thread.
        queue_factor : int, optional
            Jobs queued per worker.
        report_delay : float, optional
            Seconds between two progress log lines.

        Returns
        -------
        numpy.ndarray
            float32, one log-probability per sentence scored (``log P(sentence)``, <= 0).

        Raises
        ------
        RuntimeError
            If the model has no hierarchical-softmax layer (``hs=0``) or no vocabulary.

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec([["a", "b", "a"]] * 20, vector_size=8, min_count=1, workers=1,
        ...                  epochs=1)
        >>> scores = model.score([["a", "b"], ["b", "a", "a"]])
        >>> scores.shape, scores.dtype.name, bool((scores < 0).all())
        ((2,), 'float32', True)
        """
        from hsw2v.running.objectives.hierarchical import score_sentences

        if len(self.wv.index_to_key) and not self.hs:
            raise RuntimeError(
                "score() needs the hierarchical-softmax output layer: this model was trained "
                "with hs=0 (negative sampling only), which defines no sentence probability; "
                "train with hs=1 to score sentences"
            )
        args = (total_sentences, chunksize, self.workers, report_delay, queue_factor)
        return score_sentences(self, sentences, *args)

    def predict_output_word(self, context_words_list, topn=10):
        """The ``topn`` most probable centre words, ``[(word, probability), ...]``: for a
        model with ``hs=1``, exact under the tree (:func:`hsw2v.scoring.predict_output_word`);
        for ``hs=0, negative > 0``, gensim's softmax over ``syn1neg``
        (:func:`hsw2v.negative.predict_output_word`).

        Parameters
        ----------
        context_words_list : list of str
            The context words; unknown ones are ignored.
        topn : int or None, optional
            How many words to return, most probable first; None returns every word.

        Returns
        -------
        list of (str, float) or None
            ``(word, probability)`` pairs; None (with a warning, as in gensim) if no context
            word is known.

        Examples
        --------
        >>> from hsw2v import Word2Vec
        >>> model = Word2Vec([["a", "b", "c"]] * 20, vector_size=8, min_count=1, workers=1,
        ...                  epochs=1)
        >>> pairs = model.predict_output_word(["a", "c"], topn=None)
        >>> sorted(word for word, _ in pairs), round(sum(p for _, p in pairs), 6)
        (['a', 'b', 'c'], 1.0)
        >>> len(model.predict_output_word(["a", "c"], topn=2))
        2
        """
        if not self.hs:  # negative sampling only: gensim's softmax over syn1neg
            from hsw2v.running.objectives.negative import predict_output_word as predict_ns

            return predict_ns(self, context_words_list, topn)
        from hsw2v.running.objectives.hierarchical import predict_output_word

        return predict_output_word(self, context_words_list, topn)
