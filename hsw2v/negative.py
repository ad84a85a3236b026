"""Negative sampling's draw table and prediction under their public name: the code lives
beside the objective table, in :mod:`hsw2v.running.objectives.negative`."""

from hsw2v.running.objectives.negative import make_cum_table, predict_output_word

__all__ = ["make_cum_table", "predict_output_word"]
