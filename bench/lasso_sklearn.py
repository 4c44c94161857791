#!/usr/bin/python3
"""scikit-learn's coordinate-descent Lasso / ElasticNet on a data set parasol also reads, one
thread: prints one CSV row per fit (max_iter, seconds, objective, nonzeros, n_iter).

Usage: lasso_sklearn.py DATA LAMBDA L1_RATIO TOL [MAX_ITER ...]
DATA is NAME.csv (header, label column y) or a LIBSVM file. TOL is parasol's relative duality
gap (gap / objective at w = 0); scikit-learn's tol is the gap over ||y - mean y||^2 with its
objective scaled by n, i.e. half of parasol's, so TOL / 2 is passed. The objective printed is
parasol's formula, computed here from the fitted coefficients.
"""
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import ElasticNet  # noqa: E402


def load(path):
    if path.endswith(".csv"):
        with open(path) as f:
            header = f.readline().strip().split(",")
        data = np.loadtxt(path, delimiter=",", skiprows=1)
        label = header.index("y")
        return np.asfortranarray(np.delete(data, label, axis=1)), data[:, label]
    x, y = load_svmlight_file(path)
    return x.tocsc(), y


def main():
    path, lam, l1_ratio, tol = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    max_iters = [int(v) for v in sys.argv[5:]] or [1000000]
    x, y = load(path)
    n = x.shape[0]
    warnings.simplefilter("ignore", ConvergenceWarning)
    print("max_iter,seconds,objective,nonzeros,n_iter")
    for max_iter in max_iters:
        model = ElasticNet(alpha=lam, l1_ratio=l1_ratio, tol=tol / 2, max_iter=max_iter, selection="cyclic")
        start = time.perf_counter()
        model.fit(x, y)
        seconds = time.perf_counter() - start
        w = model.coef_
        r = y - x @ w - model.intercept_
        objective = r @ r / (2 * n) + lam * l1_ratio * np.abs(w).sum() + lam * (1 - l1_ratio) / 2 * (w @ w)
        print(f"{max_iter},{seconds:.6f},{objective:.17g},{np.count_nonzero(w)},{model.n_iter_}", flush=True)


if __name__ == "__main__":
    main()
