#!/usr/bin/env python3
"""The peers of bench/svm_peers_bench.sh, one fit per process, and its generated data set.

  svm_peers.py generate PREFIX            PREFIX.train and PREFIX.test: w8a's shape (49,749 and
                                          14,951 rows, 300 binary features, 12 set per row), labels
                                          from a planted linear rule with 1% flipped; seed 1
  svm_peers.py libsvm TRAIN TEST C GAMMA  LIBSVM (PyPI libsvm-official): -c C -g GAMMA -e 0.001 -m 100
  svm_peers.py thundersvm TRAIN TEST C GAMMA THREADS
                                          ThunderSVM's CPU build: the same kernel, tolerance, cache

Prints one JSON line: solver_seconds (the fit alone, reading the files left out), objective (the
sum of the two-class machines' dual objectives, LIBSVM only), support_vectors, test_accuracy and
predict_seconds (the test set's prediction, which the benchmark takes off the process's time)."""
import json
import os
import re
import sys
import tempfile
import time


def generate(prefix):
    import numpy as np
    rng = np.random.default_rng(1)
    features, per_row = 300, 12
    w = rng.normal(size=features)
    for name, rows in (("train", 49749), ("test", 14951)):
        with open(f"{prefix}.{name}", "w") as f:
            for _ in range(rows):
                idx = np.sort(rng.choice(features, per_row, replace=False))
                score = w[idx].sum()
                label = 1 if score > 0 else -1
                if rng.random() < 0.01:
                    label = -label
                f.write(f"{label} " + " ".join(f"{i + 1}:1" for i in idx) + "\n")


def libsvm(train, test, c, gamma):
    from libsvm.svmutil import svm_predict, svm_read_problem, svm_train
    y, x = svm_read_problem(train)
    yt, xt = svm_read_problem(test)
    # LIBSVM reports each machine's objective on the C library's stdout: capture file descriptor 1.
    with tempfile.TemporaryFile(mode="w+") as log:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(log.fileno(), 1)
        try:
            start = time.perf_counter()
            model = svm_train(y, x, f"-c {c} -g {gamma} -e 0.001 -m 100")
            seconds = time.perf_counter() - start
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        log.seek(0)
        objectives = [float(v) for v in re.findall(r"obj = (-?[0-9.e+-]+)", log.read())]
    start = time.perf_counter()
    _, (accuracy, _, _), _ = svm_predict(yt, xt, model, "-q")
    return {"solver_seconds": seconds, "objective": sum(objectives), "support_vectors": model.get_nr_sv(),
            "test_accuracy": accuracy / 100, "predict_seconds": time.perf_counter() - start}


def thundersvm(train, test, c, gamma, threads):
    from sklearn.datasets import load_svmlight_file
    from thundersvm import SVC
    x, y = load_svmlight_file(train)
    xt, yt = load_svmlight_file(test, n_features=x.shape[1])
    model = SVC(kernel="rbf", C=c, gamma=gamma, tol=1e-3, cache_size=100, n_jobs=threads)
    start = time.perf_counter()
    model.fit(x, y)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = float((model.predict(xt) == yt).mean())
    return {"solver_seconds": seconds, "objective": None, "support_vectors": int(sum(model.n_sv)),
            "test_accuracy": accuracy, "predict_seconds": time.perf_counter() - start}


def main():
    what = sys.argv[1]
    if what == "generate":
        generate(sys.argv[2])
        return
    train, test, c, gamma = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
    if what == "libsvm":
        result = libsvm(train, test, c, gamma)
    else:
        result = thundersvm(train, test, c, gamma, int(sys.argv[6]))
    print(json.dumps(result), flush=True)


main()
