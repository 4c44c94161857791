"""The Lasso and L1 logistic peers of lasso_peers_bench.sh, one thread, on the files parasol reads,
and one yardstick for every system, computed here from its coefficients.

  fit SOLVER DATA LAMBDA SOLVER_TOL   one fit; prints seconds (the fit's own), objective, relative
                                      gap, nonzeros, P(0). SOLVER: sklearn, celer, skglm, glmnet
                                      (Lasso); liblinear, sklearn-liblinear, celer, skglm (logistic)
  gap DATA LAMBDA MODEL               the same figures for a model parasol wrote (--model)
  With --l1-ratio R: the elastic net, lambda (R ||w||_1 + (1 - R)/2 ||w||^2) (no gap computed).
  With --path N MIN_RATIO: N lambdas from lambda_max down to lambda_max MIN_RATIO, log-spaced as
  parasol's --lambda-path (LAMBDA is then ignored), each fit from the last (glmnet: its own path);
  the figures are the last lambda's, the time the whole path's.
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


def quality(x, y, lam, w, l1_ratio=1.0):
    """Objective and relative duality gap of coefficients w (intercept at its optimum); the elastic
    net's (l1_ratio < 1) gap is not computed (nan): the yardstick is the objective."""
    n = x.shape[0]
    xw = x @ w
    b = float(np.mean(y - xw))
    r = y - xw - b
    primal = r @ r / (2 * n) + lam * (l1_ratio * np.abs(w).sum() + (1 - l1_ratio) / 2 * (w @ w))
    yc = y - y.mean()
    p0 = yc @ yc / (2 * n)
    if l1_ratio < 1:
        return primal, float("nan"), p0
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


def fit(solver, x, y, lambdas, tol, l1_ratio=1.0):
    """Fits each lambda in turn, each from the last (one lambda, or a path); returns (seconds, the
    last lambda's coefficients). glmnet fits its path natively, the others warm-started."""
    lam = lambdas[0]
    # The Lasso's own class where l1_ratio is 1 (each peer's Lasso, as a user would call it).
    enet = {"l1_ratio": l1_ratio} if l1_ratio < 1 else {}
    if solver == "sklearn":
        from sklearn.linear_model import ElasticNet, Lasso
        model = (ElasticNet if enet else Lasso)(alpha=lam, tol=tol, max_iter=10**7, selection="cyclic",
                                                warm_start=True, **enet)
    elif solver == "celer":
        from celer import ElasticNet, Lasso
        model = (ElasticNet if enet else Lasso)(alpha=lam, tol=tol, max_iter=1000, max_epochs=10**6,
                                                warm_start=True, **enet)
    elif solver == "skglm":
        from skglm import ElasticNet, Lasso
        kind = ElasticNet if enet else Lasso
        model = kind(alpha=lam, tol=tol, max_iter=1000, max_epochs=10**6, fit_intercept=True, warm_start=True,
                     **enet)
        kind(alpha=lam, tol=tol, fit_intercept=True, **enet).fit(x[:, :5], y)  # numba warm-up, not timed
    elif solver == "glmnet":
        from glmnet import ElasticNet
        model = ElasticNet(alpha=l1_ratio, lambda_path=np.array(lambdas), tol=tol, standardize=False,
                           fit_intercept=True, n_splits=0, max_iter=10**7)
        start = time.perf_counter()
        model.fit(x, y)
        seconds = time.perf_counter() - start
        return seconds, np.asarray(model.coef_path_[:, -1], dtype=float).ravel()
    else:
        raise SystemExit(f"lasso_peers.py: unknown solver {solver}")
    start = time.perf_counter()
    for lam in lambdas:
        model.set_params(alpha=lam)
        model.fit(x, y)
    seconds = time.perf_counter() - start
    return seconds, np.asarray(model.coef_, dtype=float).ravel()


def lambdas_of(x, y, lam, l1_ratio, path):
    """[lam], or path = (N, MIN_RATIO): N lambdas from lambda_max down, log-spaced, as parasol's."""
    if path is None:
        return [lam]
    count, ratio = path
    n = x.shape[0]
    top = float(np.abs(x.T @ (y - y.mean())).max()) / (n * l1_ratio)
    return [top * ratio ** (k / (count - 1)) for k in range(count)]


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


def options(argv):
    """--logistic, --l1-ratio R and --path N MIN_RATIO taken out of argv."""
    args, logistic, l1_ratio, path = [], False, 1.0, None
    i = 0
    while i < len(argv):
        if argv[i] == "--logistic":
            logistic = True
        elif argv[i] == "--l1-ratio":
            l1_ratio, i = float(argv[i + 1]), i + 1
        elif argv[i] == "--path":
            path, i = (int(argv[i + 1]), float(argv[i + 2])), i + 2
        else:
            args.append(argv[i])
        i += 1
    return args, logistic, l1_ratio, path


def main():
    warnings.simplefilter("ignore")
    args, logistic, l1_ratio, path = options(sys.argv[1:])
    mode = args[0]
    if mode not in ("fit", "gap"):
        raise SystemExit(__doc__)
    data, lam = (args[2], float(args[3])) if mode == "fit" else (args[1], float(args[2]))
    x, y = load(data)
    if logistic:
        y = np.where(y > y.min(), 1.0, -1.0)
    lambdas = lambdas_of(x, y, lam, l1_ratio, path)
    if mode == "fit" and logistic:
        seconds, w = fit_logistic(args[1], x, y, lam, float(args[4]))
    elif mode == "fit":
        seconds, w = fit(args[1], x, y, lambdas, float(args[4]), l1_ratio)
    else:
        seconds, w = float("nan"), read_model(args[3], x.shape[1])
    lam = lambdas[-1]
    objective, gap, p0 = logistic_quality(x, y, lam, w) if logistic else quality(x, y, lam, w, l1_ratio)
    print(f"{seconds:.6f},{objective:.17g},{gap:.6g},{np.count_nonzero(w)},{p0:.17g}", flush=True)


if __name__ == "__main__":
    main()
