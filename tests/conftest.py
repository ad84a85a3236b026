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


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        help="run the crash-hunting fuzz tests (tests/test_fuzz_models.py) 25 times longer",
    )


def pytest_configure(config):
    import os

    if config.getoption("--fuzz-long", default=False):
        os.environ["HSW2V_FUZZ_LONG"] = "1"
