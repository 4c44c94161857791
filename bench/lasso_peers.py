"""The Lasso and L1 logistic peers of lasso_peers_bench.sh, one thread, on the files parasol reads,
and one yardstick for every system, computed here from its coefficients.

  fit SOLVER DATA LAMBDA SOLVER_TOL   one fit; prints seconds (the fit's own), objective, relative
                                      gap, nonzeros, P(0). SOLVER: sklearn, celer, skglm, glmnet
                                      (Lasso); liblinear, sklearn-liblinear, celer, skglm (logistic)
  gap DATA LAMBDA MODEL               the same figures for a model parasol wrote (--model)
  Either with --logistic: (1/n) sum log(1 + exp(-y x.w)) + lambda ||w||_1, labels +-1, no intercept
  (LIBLINEAR's -s 6 penalises its bias term, so every system fits none); P(0) = log 2; no gap.

The objective is parasol's and all four peers': ||y - Xw - b||^2 / (2n) + lambda ||w||_1, with an
unpenalised intercept b. The relative gap is (P(w) - D(nu)) / P(0), P(0) = ||y - mean y||^2 / (2n),
with the dual point nu = r / max(1, ||X^T r||_inf / (n lambda)) built from the residual r at the
optimal intercept (so sum r = 0 and X^T r equals the centred X's): parasol's --tolerance is this
quantity. The duality gap depends on the dual point a solver would build (celer's extrapolated
one is tighter than this residual's), so systems are compared at equal suboptimality: (P(w) - P*) /
P(0), P* the least objective any run of the case reached; the gap is printed beside it.
"""
import os
import sys
import time
import warnings

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from lasso_sklearn import load  # noqa: E402  (one reader of the CSV and LIBSVM files)


def quality(x, y, lam, w):
    """Objective and relative duality gap of coefficients w (intercept at its optimum)."""
    n = x.shape[0]
    xw = x @ w
    b = float(np.mean(y - xw))
    r = y - xw - b
    primal = r @ r / (2 * n) + lam * np.abs(w).sum()
    yc = y - y.mean()
    p0 = yc @ yc / (2 * n)
    scale = max(1.0, float(np.abs(x.T @ r).max()) / (n * lam)) if w.size else 1.0
    nu = r / scale
    dual = (yc @ yc - (yc - nu) @ (yc - nu)) / (2 * n)
    return primal, (primal - dual) / p0, p0


def logistic_quality(x, y, lam, w):
    margins = y * (x @ w)
    primal = np.logaddexp(0.0, -margins).mean() + lam * np.abs(w).sum()
    return primal, float("nan"), float(np.log(2.0))


def fit_logistic(solver, x, y, lam, tol):
    """L1 logistic regression without an intercept; returns (seconds, coefficients)."""
    n = x.shape[0]
    c = 1.0 / (n * lam)  # LIBLINEAR's and scikit-learn's C for parasol's lambda
    if solver == "liblinear":
        from liblinear.liblinearutil import problem, parameter, train
        prob = problem(y.tolist(), x.tocsr())
        param = parameter(f"-s 6 -c {c!r} -e {tol!r} -q")
        start = time.perf_counter()
        model = train(prob, param)
        seconds = time.perf_counter() - start
        w, _ = model.get_decfun()
        w = np.asarray(w[: x.shape[1]] + [0.0] * (x.shape[1] - len(w)))
        # Its decision value is for the first label it met: +1 is what the yardstick scores.
        return seconds, w if model.get_labels()[0] == 1 else -w
    if solver == "sklearn-liblinear":
        from sklearn.linear_model import LogisticRegression
        model = LogisticRegression(penalty="l1", solver="liblinear", C=c, tol=tol, fit_intercept=False,
                                   max_iter=10**6)
    elif solver == "celer":
        from celer import LogisticRegression
        model = LogisticRegression(C=c, tol=tol, fit_intercept=False, max_iter=1000, max_epochs=10**6)
    elif solver == "skglm":
        from skglm import SparseLogisticRegression
        model = SparseLogisticRegression(alpha=lam, tol=tol, fit_intercept=False, max_iter=1000,
                                         max_epochs=10**6)
        SparseLogisticRegression(alpha=lam, tol=1e-2, fit_intercept=False).fit(x[:, :5], y)  # numba warm-up
    else:
        raise SystemExit(f"lasso_peers.py: unknown logistic solver {solver}")
    start = time.perf_counter()
    model.fit(x, y)
    seconds = time.perf_counter() - start
    return seconds, np.asarray(model.coef_, dtype=float).ravel()


def fit(solver, x, y, lam, tol):
    """Fits and returns (seconds, coefficients)."""
    if solver == "sklearn":
        from sklearn.linear_model import Lasso
        model = Lasso(alpha=lam, tol=tol, max_iter=10**7, selection="cyclic")
    elif solver == "celer":
        from celer import Lasso
        model = Lasso(alpha=lam, tol=tol, max_iter=1000, max_epochs=10**6)
    elif solver == "skglm":
        from skglm import Lasso
        model = Lasso(alpha=lam, tol=tol, max_iter=1000, max_epochs=10**6, fit_intercept=True)
    elif solver == "glmnet":
        from glmnet import ElasticNet
        model = ElasticNet(alpha=1.0, lambda_path=np.array([lam]), tol=tol, standardize=False,
                           fit_intercept=True, n_splits=0, max_iter=10**7)
    else:
        raise SystemExit(f"lasso_peers.py: unknown solver {solver}")
    if solver == "skglm":  # its first fit compiles its numba kernels: warm them up (not timed)
        type(model)(alpha=lam, tol=1e-2, fit_intercept=True).fit(x[:, :5], y)
    start = time.perf_counter()
    model.fit(x, y)
    seconds = time.perf_counter() - start
    w = np.asarray(model.coef_path_[:, 0] if solver == "glmnet" else model.coef_, dtype=float).ravel()
    return seconds, w


def read_model(path, p):
    """The last lambda's weights from a parasol model file ('feature weight' lines, from 1)."""
    w = np.zeros(p)
    with open(path) as f:
        for line in f:
            if line.startswith("lambda"):
                w[:] = 0
            elif line[0].isdigit():
                j, v = line.split()
                w[int(j) - 1] = float(v)
    return w


def main():
    warnings.simplefilter("ignore")
    logistic = "--logistic" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--logistic"]
    mode = args[0]
    if mode == "fit":
        solver, path, lam, tol = args[1], args[2], float(args[3]), float(args[4])
        x, y = load(path)
        if logistic:
            y = np.where(y > y.min(), 1.0, -1.0)
        seconds, w = (fit_logistic if logistic else fit)(solver, x, y, lam, tol)
    elif mode == "gap":
        path, lam, model = args[1], float(args[2]), args[3]
        x, y = load(path)
        if logistic:
            y = np.where(y > y.min(), 1.0, -1.0)
        seconds, w = float("nan"), read_model(model, x.shape[1])
    else:
        raise SystemExit(__doc__)
    objective, gap, p0 = (logistic_quality if logistic else quality)(x, y, lam, w)
    print(f"{seconds:.6f},{objective:.17g},{gap:.6g},{np.count_nonzero(w)},{p0:.17g}", flush=True)


if __name__ == "__main__":
    main()
