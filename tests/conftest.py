import os
import time

import numpy as np
import pytest


def planted_corpus(n_clusters=6, words_per_cluster=12, n_sentences=3000, length=10, seed=0):
    """Sentences that each draw words from one planted cluster, plus a few shared filler words.

    A model that learns anything from co-occurrence puts each word's nearest neighbours in its
    own cluster."""
    rng = np.random.default_rng(seed)
    clusters = [[f"c{c}w{i}" for i in range(words_per_cluster)] for c in range(n_clusters)]
    fillers = ["the", "of", "and"]
    sentences = []
    for _ in range(n_sentences):
        cluster = clusters[rng.integers(n_clusters)]
        sentence = [cluster[i] for i in rng.integers(words_per_cluster, size=length)]
        sentence[rng.integers(length)] = fillers[rng.integers(len(fillers))]
        sentences.append(sentence)
    return sentences, clusters


def settle(path, age_seconds=3600):
    """Date a file's mtime ``age_seconds`` back: hsw2v reads a file modified in the last two
    seconds again every pass (hsw2v.corpora.file_identity), and a test that wants the
    read-once path must give it a file it can prove unchanged."""
    os.utime(path, ns=(time.time_ns(), time.time_ns() - age_seconds * 10**9))


def cluster_recovery(wv, clusters, topn=5):
    """Fraction of top-n neighbours that share the query word's cluster."""
    cluster_of = {w: c for c, words in enumerate(clusters) for w in words}
    hits = total = 0
    for word, c in cluster_of.items():
        for neighbour, _ in wv.most_similar(word, topn=topn):
            hits += cluster_of.get(neighbour) == c
            total += 1
    return hits / total


@pytest.fixture(scope="session")
def planted():
    return planted_corpus()
