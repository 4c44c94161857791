#!/usr/bin/python3
"""scikit-learn's L1 logistic regression on a LIBSVM file parasol also reads, one thread: prints
one CSV row per fit (solver, tol, seconds, objective, nonzeros, n_iter).

Usage: logreg_sklearn.py DATA LAMBDA SOLVER:TOL [SOLVER:TOL ...]
C = 1 / (n LAMBDA) makes scikit-learn's objective n C times parasol's. saga leaves the intercept
unpenalised, as parasol does; liblinear penalises it as a weight on a constant feature of value
intercept_scaling (100 here, so the penalty is |b| / 100). Neither stops on a duality gap: saga's
tol bounds the change of the weights in an epoch, liblinear's its own optimality measure. The
objective printed is parasol's formula, computed here from the fitted coefficients.
"""
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402


def main():
    x, y = load_svmlight_file(sys.argv[1])
    # scikit-learn 1.9's liblinear refuses the 64-bit indices its own reader now gives a9a.
    x.indices = x.indices.astype(np.int32)
    x.indptr = x.indptr.astype(np.int32)
    lam = float(sys.argv[2])
    n = x.shape[0]
    y = np.where(y == y.min(), -1.0, 1.0)
    warnings.simplefilter("ignore", ConvergenceWarning)
    print("solver,tol,seconds,objective,nonzeros,n_iter")
    for spec in sys.argv[3:]:
        solver, tol = spec.split(":")
        model = LogisticRegression(penalty="l1", C=1 / (n * lam), solver=solver, tol=float(tol), max_iter=100000,
                                   intercept_scaling=100 if solver == "liblinear" else 1)
        start = time.perf_counter()
        model.fit(x, y)
        seconds = time.perf_counter() - start
        w, b = model.coef_[0], model.intercept_[0]
        objective = np.mean(np.logaddexp(0, -y * (x @ w + b))) + lam * np.abs(w).sum()
        print(f"{solver},{tol},{seconds:.6f},{objective:.17g},{np.count_nonzero(w)},{model.n_iter_[0]}", flush=True)


if __name__ == "__main__":
    main()
