"""Hostile input, round three, on the command line: an output that is one of the command's
inputs is refused before any work (class 1), and SIGTERM during a save leaves no temporary
file; a stale one is swept by the next save (class 7). Every command runs in a subprocess,
as a user runs it."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import cli_env, run_cli

from hsw2v import persist

pytestmark = pytest.mark.xdist_group("hostile3_cli")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_corpus(path: Path, lines: int = 300) -> None:
    words = [f"w{i}" for i in range(40)]
    with open(path, "w", encoding="utf-8") as fout:
        for n in range(lines):
            fout.write(" ".join(words[(n * 7 + k) % 40] for k in range(12)) + "\n")


TRAIN = ("train", "--size", "8", "--epochs", "1", "--workers", "1", "--min-count", "1")


def _spellings(tmp_path: Path, name: str) -> dict[str, str]:
    """Other names for ``tmp_path / name``: a symbolic link, a hard link, a path through
    ``..``, and an absolute path."""
    os.symlink(name, tmp_path / "sym")
    os.link(tmp_path / name, tmp_path / "hard")
    (tmp_path / "sub").mkdir()
    return {
        "same": name,
        "symlink": "sym",
        "hardlink": "hard",
        "dotdot": f"sub/../{name}",
        "absolute": str(tmp_path / name),
    }


@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink", "dotdot", "absolute"])
@pytest.mark.parametrize("flag", ["-o", "--word2vec", "--plot-training"])
def test_train_refuses_an_output_that_is_its_corpus(flag, spelling, tmp_path):
    write_corpus(tmp_path / "corpus.txt")
    before = digest(tmp_path / "corpus.txt")
    out = _spellings(tmp_path, "corpus.txt")[spelling]
    extra = [] if flag == "-o" else ["-o", "model.hsw2v"]
    result = run_cli(*TRAIN, "corpus.txt", flag, out, *extra, cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "is the same file as corpus" in lines[0], result.stderr
    assert "choose another path" in lines[0]
    assert "Traceback" not in result.stderr
    assert digest(tmp_path / "corpus.txt") == before
    assert not (tmp_path / "model.hsw2v").exists()  # refused before any work


def test_train_refuses_two_outputs_that_are_one_file(tmp_path):
    write_corpus(tmp_path / "corpus.txt")
    result = run_cli(*TRAIN, "corpus.txt", "-o", "m.bin", "--word2vec", "./m.bin", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "is the same file as output model" in result.stderr
    assert not (tmp_path / "m.bin").exists()


@pytest.mark.parametrize("spelling", ["same", "symlink", "hardlink", "dotdot", "absolute"])
def test_convert_refuses_an_output_that_is_its_input(spelling, tmp_path):
    write_corpus(tmp_path / "corpus.txt")
    assert run_cli(*TRAIN, "corpus.txt", "--word2vec", "v.txt", cwd=tmp_path).returncode == 0
    before = digest(tmp_path / "v.txt")
    out = _spellings(tmp_path, "v.txt")[spelling]
    result = run_cli("convert", "v.txt", out, "--to", "binary", cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "is the same file as INPUT" in result.stderr
    assert digest(tmp_path / "v.txt") == before


def test_distinct_files_still_train_and_convert(tmp_path):
    write_corpus(tmp_path / "corpus.txt")
    result = run_cli(*TRAIN, "corpus.txt", "-o", "m.hsw2v", "--word2vec", "v.txt", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert run_cli("convert", "v.txt", "v.bin", cwd=tmp_path).returncode == 0


# ------------------------------------------------------------------ class 7: SIGTERM

_SIGTERM_DURING = textwrap.dedent(
    """
    import os, signal, sys
    from hsw2v import persist
    from hsw2v.cli import main
    from hsw2v.keyedvectors import _word2vec_format

    where = sys.argv[1]
    if where == "model":
        real = persist._write_npy
        def write(out, arr):
            os.kill(os.getpid(), signal.SIGTERM)  # lands in the middle of the save
            return real(out, arr)
        persist._write_npy = write
    elif where == "word2vec":
        real = _word2vec_format._output
        import contextlib
        @contextlib.contextmanager
        def output(fname, append):
            with real(fname, append) as fout:
                fout.write(b"partial ")
                fout.flush()
                os.kill(os.getpid(), signal.SIGTERM)
                yield fout
        _word2vec_format._output = output
    sys.exit(main(sys.argv[2:]))
    """
)


def _train_args(where):
    out = ["-o", "m.hsw2v"] if where == "model" else ["--word2vec", "v.txt"]
    return [*TRAIN, "corpus.txt", *out, "--no-progress"]


@pytest.mark.parametrize("where", ["model", "word2vec"])
def test_sigterm_during_the_save_leaves_no_temporary_file(where, tmp_path):
    write_corpus(tmp_path / "corpus.txt")
    target = tmp_path / ("m.hsw2v" if where == "model" else "v.txt")
    assert run_cli(*_train_args(where), cwd=tmp_path).returncode == 0
    before = digest(target)
    result = subprocess.run(
        [sys.executable, "-c", _SIGTERM_DURING, where, *_train_args(where)],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 143, (result.returncode, result.stderr)
    assert "hsw2v: terminated" in result.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(["corpus.txt", target.name])
    assert digest(target) == before  # the old output, intact


def test_sigterm_during_training_writes_nothing(tmp_path):
    write_corpus(tmp_path / "corpus.txt", lines=20000)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hsw2v", *TRAIN[:-4], "--epochs", "50", "corpus.txt", "-o", "m"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 60
    err = ""
    while "training" not in err and time.monotonic() < deadline:  # wait for training to start
        err += proc.stderr.readline()
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, rest = proc.communicate(timeout=60)
    assert proc.returncode == 143, (proc.returncode, err + rest)
    assert "terminated: training stopped, nothing written" in rest
    assert os.listdir(tmp_path) == ["corpus.txt"]


_HOLD_LOCK = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(60)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="needs flock")
def test_the_next_save_sweeps_stale_temporary_files_of_its_name(tmp_path):
    from hsw2v import Word2Vec

    model = Word2Vec([["a", "b", "c"]] * 20, vector_size=4, min_count=1, epochs=1, workers=1)
    path = tmp_path / "m.hsw2v"
    old = time.time() - 2 * getattr(persist, "STALE_TEMP_SECONDS", 60.0)
    stale = tmp_path / ".m.hsw2v.ab_cd123.tmp.hsw2v"  # as a save killed by SIGKILL leaves it
    busy = tmp_path / ".m.hsw2v.zz999999.tmp.hsw2v"  # a save in progress elsewhere
    fresh = tmp_path / ".m.hsw2v.q1q1q1q1.tmp.hsw2v"  # just created, not locked yet
    other = tmp_path / ".n.hsw2v.ab_cd123.tmp.hsw2v"  # another target's
    mine = tmp_path / ".m.hsw2v.notmkstemp.tmp.hsw2v"  # not the pattern
    for f in (stale, busy, fresh, other, mine):
        f.write_bytes(b"x" * 1000)
        if f is not fresh:
            os.utime(f, (old, old))
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(busy)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        model.save(path)
    finally:
        holder.kill()
        holder.wait()
    left = sorted(os.listdir(tmp_path))
    assert left == sorted(p.name for p in (path, busy, fresh, other, mine)), left
    Word2Vec.load(path)


def test_a_save_in_progress_is_never_swept_by_another(tmp_path):
    first_fd, first = persist.atomic_temp(tmp_path / "x.bin")
    os.write(first_fd, b"half")
    old = time.time() - 2 * getattr(persist, "STALE_TEMP_SECONDS", 60.0)
    os.utime(first, (old, old))  # even an old-looking one: its lock says it is alive
    with persist.atomic_file(tmp_path / "x.bin") as (fd, _tmp):
        os.write(fd, b"second")
        os.close(fd)
    assert os.path.exists(first)
    os.write(first_fd, b" done")
    os.close(first_fd)
    persist.atomic_commit(first, tmp_path / "x.bin")
    assert (tmp_path / "x.bin").read_bytes() == b"half done"
    assert os.listdir(tmp_path) == ["x.bin"]
