"""The classifier on standardized features: scikit-learn's digits after ``StandardScaler``
(the scaling the classifier's divergence warning recommends), test accuracy and the training
loss of each epoch at ``epochs`` 3 and 20, for three seeds, one worker.

Run from the repository root:
    python3 benchmarks/probes/classifier_standardized.py [--epochs 3,20] [--seeds 0,1,2]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from hsw2v.classifier import HierarchicalSoftmaxClassifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", default="3,20")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    Xtr = scaler.transform(Xtr).astype(np.float32)
    Xte = scaler.transform(Xte).astype(np.float32)
    for epochs in (int(e) for e in args.epochs.split(",")):
        for seed in (int(s) for s in args.seeds.split(",")):
            started = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                clf = HierarchicalSoftmaxClassifier(epochs=epochs, random_state=seed, workers=1)
                clf.fit(Xtr, ytr)
            accuracy = float((clf.predict(Xte) == yte).mean())
            losses = ", ".join(f"{v:.3g}" for v in clf.loss_curve_)
            print(
                f"epochs={epochs} seed={seed} accuracy={accuracy:.4f} epochs run="
                f"{clf.n_iter_} warnings={len(caught)} {time.perf_counter() - started:.2f}s "
                f"loss per epoch: {losses}"
            )


if __name__ == "__main__":
    main()
