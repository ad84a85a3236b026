"""Hierarchical softmax's queries (sentence scores, output-word prediction) under their public
name: the code lives beside the objective table, in
:mod:`hsw2v.running.objectives.hierarchical`."""

from hsw2v.running.objectives.hierarchical import (
    child_table,
    output_word_probabilities,
    predict_output_word,
    score_sentences,
)

__all__ = ["child_table", "output_word_probabilities", "predict_output_word", "score_sentences"]
