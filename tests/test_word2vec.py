"""Word2Vec end to end: learning, determinism, schedule, loss, vocabulary options, save/load."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from conftest import WEAKENED, cluster_recovery, settle, weakened_settings, word2vec_trainer

from hsw2v import FixedCorpus, LineSentence, Word2Vec
from hsw2v.vocab import RULE_DISCARD, RULE_KEEP


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("sg,cbow_mean", [(1, 1), (0, 1), (0, 0)])
def test_planted_clusters_are_recovered(planted_noisy, sg, cbow_mean, workers):
    """Full training recovers the noisy planted clusters; the controls beside it, trained one
    epoch or at a tenth of the learning rate (by one worker: ``weakened_settings``), must
    not: the test can tell a weakened training from a sound one."""
    sentences, clusters = planted_noisy
    settings = dict(vector_size=32, window=3, min_count=1, sg=sg, cbow_mean=cbow_mean,
                    workers=workers, epochs=5, sample=0, seed=3)  # fmt: skip
    assert cluster_recovery(Word2Vec(sentences, **settings).wv, clusters) > 0.9
    # the controls train with one worker (weakened_settings): the workers=2 case would
    # run the same deterministic trainings again
    for weakened in WEAKENED.values() if workers == 1 else ():
        control = Word2Vec(sentences, **weakened_settings(settings, weakened))
        assert cluster_recovery(control.wv, clusters) < 0.9


def test_random_vectors_do_not_recover_clusters(planted):
    """The recovery measure itself can fail: untrained vectors score near chance (1/6)."""
    sentences, clusters = planted
    model = Word2Vec(vector_size=32, min_count=1, workers=1)
    model.build_vocab(sentences)
    assert cluster_recovery(model.wv, clusters) < 0.4


def test_one_worker_is_bit_identical_across_runs_and_hash_seeds(tmp_path):
    # CBOW and skip-gram in one interpreter per hash seed (three starts, not six)
    script = tmp_path / "train.py"
    script.write_text(
        "import sys, hashlib\n"
        "from conftest import planted_corpus\n"
        "from hsw2v import Word2Vec\n"
        "s, _ = planted_corpus(n_sentences=400)\n"
        "for sg in (0, 1):\n"
        "    m = Word2Vec(s, vector_size=16, min_count=1, sg=sg, workers=1, epochs=2, seed=7)\n"
        "    print(hashlib.sha256(m.wv.vectors.tobytes() + m.syn1.tobytes()).hexdigest())\n"
    )
    digests = set()
    for hash_seed in ("0", "1", "12345"):
        env = dict(
            os.environ,
            PYTHONHASHSEED=hash_seed,
            PYTHONPATH=os.pathsep.join(
                [os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]
            ),
        )
        out = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, check=True
        )
        digests.add(tuple(out.stdout.split()))
    assert len(digests) == 1  # the same weights whatever the hash seed, in each mode
    (cbow, sg), = digests
    assert cbow != sg


def test_different_seeds_differ(planted):
    sentences, _ = planted
    a = Word2Vec(sentences[:300], vector_size=8, min_count=1, workers=1, epochs=1, seed=1)
    b = Word2Vec(sentences[:300], vector_size=8, min_count=1, workers=1, epochs=1, seed=2)
    assert not np.array_equal(a.wv.vectors, b.wv.vectors)


@pytest.mark.parametrize("batch_words", [7, 10000])
def test_recorded_scan_trains_like_a_fresh_read(tmp_path, batch_words):
    """build_vocab's recording of the corpus (with unknown words and empty sentences) gives the
    same jobs, so the same vectors, as reading the corpus again."""
    rng = np.random.default_rng(4)
    words = [f"w{i}" for i in range(40)]
    sentences = [
        [words[i] for i in rng.zipf(1.5, size=rng.integers(0, 15)) % 40] for _ in range(300)
    ]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    settle(path)  # unchanged since: its ids may be kept
    results = {}
    for cache_words in (100_000_000, 0):
        for corpus in (FixedCorpus(sentences), None):
            model = Word2Vec(
                vector_size=8,
                min_count=3,
                workers=1,
                seed=2,
                batch_words=batch_words,
                cache_words=cache_words,
            )
            if corpus is None:
                model.build_vocab(corpus_file=str(path))
                model.train(corpus_file=str(path), total_examples=model.corpus_count, epochs=2)
            else:
                model.build_vocab(corpus)
                model.train(corpus, total_examples=model.corpus_count, epochs=2)
            results[cache_words, corpus is None] = model.wv.vectors
    for from_file in (False, True):  # (blank lines are no sentence in a file)
        assert np.array_equal(results[100_000_000, from_file], results[0, from_file])


def test_cache_does_not_change_results(planted):
    sentences, _ = planted
    kwargs = dict(vector_size=8, min_count=1, workers=1, epochs=3, seed=5)
    cached = Word2Vec(FixedCorpus(sentences[:500]), **kwargs)
    streamed = Word2Vec(sentences[:500], cache_words=0, **kwargs)
    assert np.array_equal(cached.wv.vectors, streamed.wv.vectors)


class Recorder:
    def __init__(self):
        self.events = []

    def on_train_begin(self, model):
        self.events.append("train_begin")

    def on_epoch_begin(self, model):
        self.events.append("epoch_begin")

    def on_epoch_end(self, model):
        self.events.append(("epoch_end", model.get_latest_training_loss()))

    def on_train_end(self, model):
        self.events.append("train_end")


def test_loss_is_float64_positive_and_falls(planted):
    sentences, _ = planted
    recorder = Recorder()
    model = Word2Vec(
        sentences,
        vector_size=16,
        min_count=1,
        workers=2,
        epochs=4,
        compute_loss=True,
        callbacks=[recorder],
        sample=0,
    )
    losses = [e[1] for e in recorder.events if isinstance(e, tuple)]
    per_epoch = np.diff([0.0] + losses)
    assert isinstance(model.get_latest_training_loss(), float)
    assert per_epoch[0] > per_epoch[-1] > 0
    assert recorder.events[0] == "train_begin" and recorder.events[-1] == "train_end"
    assert recorder.events.count("epoch_begin") == 4


def test_loss_equals_negative_log_likelihood_of_pairs():
    """With alpha ~ 0 nothing moves, so the tally must equal the NLL computed from the weights:
    every (context, centre) pair of a 2-word sentence, window 1."""
    from hsw2v._kernels._inner import log_prob_all

    model = Word2Vec(
        vector_size=8,
        min_count=1,
        sg=1,
        workers=1,
        sample=0,
        alpha=1e-12,
        min_alpha=1e-12,
        window=1,
        seed=3,
    )
    model.build_vocab([["a", "b"], ["b", "c"]])
    rng = np.random.default_rng(0)
    model.syn1[:] = rng.normal(size=model.syn1.shape)
    model.train([["a", "b"]], total_examples=1, epochs=1, compute_loss=True)
    wv, t = model.wv, model.tree
    a, b = wv.key_to_index["a"], wv.key_to_index["b"]
    expected = -(
        log_prob_all(wv.vectors[a], model.syn1, t.codes, t.points, t.lengths)[b]
        + log_prob_all(wv.vectors[b], model.syn1, t.codes, t.points, t.lengths)[a]
    )
    assert model.get_latest_training_loss() == pytest.approx(expected, rel=1e-6)


def test_learning_rate_decays_linearly_to_min_alpha():
    from hsw2v.running.epochs import Schedule

    schedule = Schedule(0.025, 0.0001, epochs=2, total=100, by_words=True)
    assert schedule.alpha(0, 0) == pytest.approx(0.025)
    assert schedule.alpha(0, 100) == pytest.approx((0.025 + 0.0001) / 2)
    assert schedule.alpha(1, 100) == pytest.approx(0.0001)
    assert schedule.alpha(1, 500) == pytest.approx(0.0001)


def test_progress_counts_sentences_when_given_as_gensim_does(planted, caplog):
    """gensim's iterable mode counts the learning rate's progress in sentences whenever
    ``total_examples`` is given (in words only without it): the constructor, which passes both
    counts, then trains exactly as ``build_vocab`` and ``train(total_examples=corpus_count)``
    (gensim's two spellings of one training), and not as a count in words."""
    import logging

    planted_sentences, _ = planted
    # sentences of unequal lengths: a share of the sentences is not that share of the words
    sentences = [s[: 3 + (i * 7) % 25] for i, s in enumerate(planted_sentences)]
    kw = dict(vector_size=8, min_count=1, workers=1, sample=0, epochs=2, seed=3)
    built = Word2Vec(sentences, **kw)
    by_sentences = Word2Vec(**kw)
    by_sentences.build_vocab(sentences)
    with caplog.at_level(logging.INFO, logger="hsw2v"):
        by_sentences.train(sentences, total_examples=by_sentences.corpus_count,
                           total_words=by_sentences.corpus_total_words, epochs=2,
                           report_delay=0.0)  # fmt: skip
    assert "% examples" in caplog.text and "% words" not in caplog.text
    by_words = Word2Vec(**kw)
    by_words.build_vocab(sentences)
    by_words.train(sentences, total_words=by_words.corpus_total_words, epochs=2)
    assert np.array_equal(built.wv.vectors, by_sentences.wv.vectors)
    assert np.array_equal(built.syn1, by_sentences.syn1)
    assert not np.array_equal(built.wv.vectors, by_words.wv.vectors)


def test_train_returns_effective_and_raw_counts(planted):
    sentences, _ = planted
    model = Word2Vec(vector_size=8, min_count=1, workers=2, sample=0)
    model.build_vocab(sentences)
    trained, raw = model.train(sentences, total_examples=model.corpus_count, epochs=2)
    n_tokens = sum(len(s) for s in sentences)
    assert raw == 2 * n_tokens and trained == 2 * n_tokens
    model.sample = 1e-3
    model.build_vocab(sentences)
    trained, raw = model.train(sentences, total_examples=model.corpus_count, epochs=2)
    assert raw == 2 * n_tokens and trained < raw


def test_vocabulary_options_and_attributes():
    sentences = [["a"] * 10 + ["b"] * 5 + ["c"] * 2 + ["d"]]
    model = Word2Vec(vector_size=4, min_count=2, workers=1)
    model.build_vocab(sentences)
    assert model.wv.index_to_key == ["a", "b", "c"]
    assert [model.wv.get_vecattr(w, "count") for w in "abc"] == [10, 5, 2]
    assert model.corpus_count == 1 and model.corpus_total_words == 18
    code, point = model.wv.get_vecattr("c", "code"), model.wv.get_vecattr("c", "point")
    assert len(code) == len(point) and point[0] == 1  # root = V - 2
    model = Word2Vec(vector_size=4, min_count=1, workers=1, max_final_vocab=2)
    model.build_vocab(sentences)
    assert model.wv.index_to_key == ["a", "b"]

    def rule(word, count, min_count):
        return RULE_DISCARD if word == "a" else RULE_KEEP

    model = Word2Vec(vector_size=4, min_count=3, workers=1)
    model.build_vocab(sentences, trim_rule=rule)
    assert model.wv.index_to_key == ["b", "c", "d"]
    model = Word2Vec(vector_size=4, min_count=1, workers=1, null_word=1)
    model.build_vocab(sentences)
    assert model.wv.index_to_key[-1] == "\0"


def test_max_vocab_size_prunes_during_scan():
    sentences = [[f"rare{i}", "common", "common"] for i in range(200)]
    model = Word2Vec(vector_size=4, min_count=1, workers=1, max_vocab_size=50)
    model.build_vocab(sentences)
    assert "common" in model.wv.key_to_index
    assert len(model.wv.index_to_key) <= 51


def test_subsampling_probabilities_match_gensim():
    gensim_models = pytest.importorskip("gensim.models")
    rng = np.random.default_rng(1)
    freq = {f"w{i}": int(c) for i, c in enumerate(rng.zipf(1.3, size=400) + 4)}
    for sample in (1e-3, 1e-5, 0, 3):
        ours = Word2Vec(vector_size=4, min_count=5, sample=sample, workers=1)
        ours.build_vocab_from_freq(freq)
        theirs = gensim_models.Word2Vec(vector_size=4, min_count=5, sample=sample, hs=1, negative=0)
        theirs.build_vocab_from_freq(freq)
        for word in list(freq)[:100]:
            if word in theirs.wv.key_to_index:
                ours_p = int(ours.wv.get_vecattr(word, "sample_int"))
                theirs_p = int(theirs.wv.get_vecattr(word, "sample_int"))
                assert abs(ours_p - theirs_p) <= 1, (word, sample)


def test_long_sentences_are_not_truncated():
    sentence = ["x", "y"] * 10_000 + ["tail"] * 5
    model = Word2Vec(vector_size=8, min_count=1, workers=1, sample=0, epochs=1)
    model.build_vocab([sentence])
    before = model.wv["tail"].copy()
    trained, raw = model.train([sentence], total_examples=1, epochs=1)
    assert trained == raw == len(sentence)
    assert not np.array_equal(before, model.wv["tail"])


def test_save_load_round_trip_and_continue_training(tmp_path, planted):
    sentences, _ = planted
    model = Word2Vec(sentences[:500], vector_size=8, min_count=1, workers=1, epochs=1, sg=1)
    path = tmp_path / "model.hsw2v"
    model.save(path)
    loaded = Word2Vec.load(path)
    assert loaded.wv.index_to_key == model.wv.index_to_key
    assert np.array_equal(loaded.wv.vectors, model.wv.vectors)
    assert np.array_equal(loaded.syn1, model.syn1)
    assert loaded.sg == 1 and loaded.vector_size == 8
    assert np.array_equal(loaded.wv.get_vecattr("the", "code"), model.wv.get_vecattr("the", "code"))
    loaded.train(sentences[:500], total_examples=500, epochs=1)
    model.train(sentences[:500], total_examples=500, epochs=1)
    assert np.array_equal(loaded.wv.vectors, model.wv.vectors)  # identical continuation
    mapped = Word2Vec.load(path, mmap="r")
    assert np.array_equal(mapped.wv.vectors, Word2Vec.load(path).wv.vectors)


def test_line_sentence_and_corpus_file(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(["alpha", "beta", "gamma"] * 4) for _ in range(50)))
    from_iterable = Word2Vec(LineSentence(path), vector_size=8, min_count=1, workers=1)
    from_file = Word2Vec(corpus_file=str(path), vector_size=8, min_count=1, workers=1)
    assert np.array_equal(from_iterable.wv.vectors, from_file.wv.vectors)


@pytest.mark.parametrize(
    "bad,error,match",
    [
        ("just a string", TypeError, "single string"),
        (["a list", "of strings"], TypeError, "list of str tokens"),
        ([[1, 2, 3]], TypeError, "tokens must be str"),
        ([], ValueError, "corpus is empty"),
        ([["rare"]], ValueError, "vocabulary is empty"),
    ],
)
def test_bad_corpora_are_rejected_before_training(bad, error, match):
    with pytest.raises(error, match=match):
        Word2Vec(bad, vector_size=4, workers=1)


def test_one_shot_generator_with_several_epochs_is_rejected():
    with pytest.raises(TypeError, match="one-shot"):
        Word2Vec((s for s in [["a", "b"]] * 10), vector_size=4, min_count=1, epochs=2)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"vector_size": 0}, "vector_size"),
        ({"window": 0}, "window"),
        ({"alpha": 0}, "alpha"),
        ({"workers": 0}, "workers"),
        ({"sample": -1}, "sample"),
        ({"sg": 2}, "sg"),
        ({"hs": 0, "negative": 0}, "either 'hs' or 'negative'"),
        ({"hs": 2}, "hs must be 0 or 1"),
        ({"negative": -1}, "negative must be"),
    ],
)
def test_invalid_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Word2Vec(**kwargs)


def test_train_requires_counts_and_epochs(planted):
    sentences, _ = planted
    model = Word2Vec(vector_size=4, min_count=1, workers=1)
    with pytest.raises(RuntimeError, match="build the vocabulary"):
        model.train(sentences, total_examples=10, epochs=1)
    model.build_vocab(sentences)
    with pytest.raises(ValueError, match="total_examples or total_words"):
        model.train(sentences, epochs=1)
    with pytest.raises(ValueError, match="epochs"):
        model.train(sentences, total_examples=10)


def test_worker_error_is_raised_in_caller_and_model_stays_usable(planted):
    sentences, _ = planted

    class Boom:
        def __iter__(self):
            yield from sentences[:100]
            raise OSError("disk vanished")

    model = Word2Vec(vector_size=8, min_count=1, workers=2)
    model.build_vocab(sentences)
    with pytest.raises(OSError, match="disk vanished"):
        model.train(Boom(), total_examples=100, epochs=1)
    model.train(sentences, total_examples=len(sentences), epochs=1)
    assert model.wv.most_similar("c0w0", topn=1)


def test_keyboard_interrupt_stops_promptly_and_leaves_a_usable_model(planted):
    sentences, _ = planted
    big = sentences * 200  # far more work than the test waits for
    model = Word2Vec(vector_size=32, min_count=1, workers=2, cache_words=0)
    model.build_vocab(big)
    fired, armed = [], []

    def interrupt(progress):  # a progress hook: the interrupt is fired from another thread
        if not armed:
            armed.append(True)
            import _thread

            def fire():
                fired.append(time.perf_counter())
                _thread.interrupt_main()

            threading.Thread(target=fire).start()

    with pytest.raises(KeyboardInterrupt):
        model.train(big, total_examples=len(big), epochs=5, progress=interrupt)
    assert time.perf_counter() - fired[0] < 5
    assert all(t.name.startswith("hsw2v") is False for t in threading.enumerate())
    assert np.isfinite(model.wv.vectors).all()
    model.train(sentences, total_examples=len(sentences), epochs=1)


# ---------------------------------------------------------------- promises of the docs
@pytest.mark.parametrize("hs,negative", [(1, 0), (0, 5)])
def test_loss_is_the_same_for_any_number_of_workers(planted, hs, negative):
    """Every job draws from its own stream seeded from (seed, epoch, job), so at a learning
    rate near 0 (the weights barely move) the summed loss does not depend on how many
    threads trained the jobs, nor in which order they finished: the default path
    (subsampling, reduced windows, negatives) included."""
    sentences, _ = planted
    losses = []
    for workers in (1, 2, 3):
        model = Word2Vec(sentences, vector_size=16, min_count=1, hs=hs, negative=negative,
                         sample=1e-2, workers=workers, epochs=2, seed=11, alpha=1e-9,
                         min_alpha=1e-9, batch_words=500, compute_loss=True)  # fmt: skip
        losses.append(model.get_latest_training_loss())
    assert losses[0] > 0
    assert losses[1] == pytest.approx(losses[0], rel=1e-6)
    assert losses[2] == pytest.approx(losses[0], rel=1e-6)
    other_seed = Word2Vec(sentences, vector_size=16, min_count=1, hs=hs, negative=negative,
                          sample=1e-2, workers=1, epochs=2, seed=12, alpha=1e-9,
                          min_alpha=1e-9, batch_words=500, compute_loss=True)  # fmt: skip
    assert other_seed.get_latest_training_loss() != pytest.approx(losses[0], rel=1e-6)


def test_an_exception_in_a_workers_kernel_job_reaches_the_caller_with_no_thread_left():
    """A job the kernel refuses (its last sentence end is not its length), among good ones:
    the kernel's ValueError, raised in a worker thread, is raised by run_epoch in the
    caller's thread after every thread has ended."""
    from hsw2v._kernels._inner import Trainer
    from hsw2v.huffman import build_huffman_tree
    from hsw2v.running.epochs import Job, Schedule, run_epoch

    tree = build_huffman_tree(np.array([50, 50, 50, 50]))
    syn0 = np.random.default_rng(0).uniform(-0.5, 0.5, (4, 8)).astype(np.float32)
    trainer = word2vec_trainer(Trainer, syn0, np.zeros((4, 8), np.float32), tree.codes, tree.points, tree.lengths,
                      np.full(4, 2**32 - 1, np.uint32), window=2, sg=1)  # fmt: skip
    good = Job(np.arange(4, dtype=np.int32), np.array([4], dtype=np.int64), 4, 1)
    bad = Job(np.arange(4, dtype=np.int32), np.array([3], dtype=np.int64), 4, 1)
    jobs = [good] * 20 + [bad] + [good] * 200
    schedule = Schedule(0.025, 0.0001, 1, sum(j.raw_words for j in jobs), by_words=True)
    with pytest.raises(ValueError, match="last sentence end"):
        run_epoch(trainer, jobs, epoch=0, workers=2, schedule=schedule, seed=1)
    assert [t for t in threading.enumerate() if t.name.startswith("hsw2v")] == []


@pytest.mark.parametrize("workers", [1, 2])
def test_sorted_vocab_ties_keep_the_first_seen_word_first(tmp_path, workers):
    """Equal counts keep the order in which the words were first seen (as gensim's stable
    sort), from a sentence iterable and from a corpus file alike."""
    words = [f"w{i}" for i in range(40)]
    order = np.random.default_rng(3).permutation(words).tolist()
    sentences = [order[i : i + 7] for i in range(0, 40, 7)]  # every word once, in `order`
    sentences += [["top"] * 3, order[::-1]]  # then all again, reversed: ties of count 2
    expected = ["top"] + order
    model = Word2Vec(vector_size=8, min_count=1, workers=workers)
    model.build_vocab(sentences)
    assert model.wv.index_to_key == expected
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(s) for s in sentences) + "\n")
    from_file = Word2Vec(vector_size=8, min_count=1, workers=workers)
    from_file.build_vocab(corpus_file=str(path))
    assert from_file.wv.index_to_key == expected
