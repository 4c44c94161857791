"""The peers of `parasol mlr` in bench/mlr_peers_bench.sh: one fit on LIBSVM files, one thread.

    mlr_peers.py fit SYSTEM TRAIN TEST LAMBDA TOL

prints `solver_seconds,test_accuracy` (the fit alone; the caller times the whole process).
SYSTEM is one of
  liblinear-s0   LIBLINEAR -s 0: L2-regularised logistic regression, primal trust-region Newton,
                 one class against the rest (its multiclass mode), -e TOL
  liblinear-s7   LIBLINEAR -s 7: the same model by dual coordinate descent, -e TOL
  sklearn-lbfgs  scikit-learn's LogisticRegression (multinomial, lbfgs, tol TOL): parasol's objective
The L2 weight is LIBLINEAR's and scikit-learn's C = 1 / (n LAMBDA), parasol's `--lambda LAMBDA`.
"""
import sys
import time

import numpy as np
from sklearn.datasets import load_svmlight_files


def fit(system, train, test, lam, tol):
    # Read together, the two files take the same width (the larger feature count).
    x_train, y_train, x_test, y_test = load_svmlight_files([train, test])
    c = 1.0 / (x_train.shape[0] * lam)
    if system.startswith("liblinear-s"):
        from liblinear import liblinearutil

        start = time.perf_counter()
        model = liblinearutil.train(y_train, x_train, f"-s {system[-1]} -c {c} -e {tol} -q")
        seconds = time.perf_counter() - start
        predicted, _, _ = liblinearutil.predict(y_test, x_test, model, "-q")
        accuracy = float(np.mean(np.asarray(predicted) == y_test))
    elif system == "sklearn-lbfgs":
        from sklearn.linear_model import LogisticRegression

        start = time.perf_counter()
        model = LogisticRegression(C=c, tol=tol, max_iter=10000).fit(x_train, y_train)
        seconds = time.perf_counter() - start
        accuracy = float(np.mean(model.predict(x_test) == y_test))
    else:
        sys.exit(f"mlr_peers.py: unknown system {system}")
    print(f"{seconds:.6f},{accuracy:.6f}")


if __name__ == "__main__":
    if len(sys.argv) != 7 or sys.argv[1] != "fit":
        sys.exit(__doc__)
    fit(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6]))
