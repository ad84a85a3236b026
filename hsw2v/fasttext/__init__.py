"""fastText: word vectors built from character n-grams (gensim 4.4's ``FastText``).

The n-gram hashing lives in :mod:`hsw2v.fasttext._ngrams`, the vectors users keep in
:mod:`hsw2v.fasttext._keyedvectors`.
"""
