"""hsw2v's fastText: subword vectors trained with hierarchical softmax."""
