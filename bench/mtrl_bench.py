"""Helpers of mtrl_bench.sh: School's splits, the scikit-learn baselines, generated tasks, the summary."""
import csv
import json
import os
import statistics
import sys

import numpy as np


def read(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
    rows = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return header, rows


def write(path, header, rows):
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(str(int(v)) if float(v).is_integer() else repr(float(v)) for v in r) + "\n")


def split(rows, seed):
    """Each school's students at random, round(0.7 n) to train."""
    rng = np.random.default_rng(seed)
    train = np.zeros(len(rows), bool)
    for t in np.unique(rows[:, 0]):
        idx = np.flatnonzero(rows[:, 0] == t)
        rng.shuffle(idx)
        k = min(max(int(round(0.7 * len(idx))), 1), len(idx) - 1) if len(idx) > 1 else len(idx)
        train[idx[:k]] = True
    return rows[train], rows[~train]


def splits(school, out):
    header, rows = read(school)
    for s in range(1, 11):
        train, test = split(rows, s)
        write(f"{out}/split.{s}.train.csv", header, train)
        write(f"{out}/split.{s}.test.csv", header, test)
        if s == 1:  # the validation split: inside split 1's training part
            vtrain, vtest = split(train, 100)
            write(f"{out}/split.0.train.csv", header, vtrain)
            write(f"{out}/split.0.test.csv", header, vtest)


def explained_variance(y, p):
    return 1 - ((y - p) ** 2).sum() / ((y - y.mean()) ** 2).sum()


def fit_predict(train, test, alpha, pooled):
    from sklearn.linear_model import Ridge
    mean, sd = train[:, 2:].mean(0), train[:, 2:].std(0)
    sd[sd == 0] = 1
    xtr, xte = (train[:, 2:] - mean) / sd, (test[:, 2:] - mean) / sd
    if pooled:
        return Ridge(alpha=alpha).fit(xtr, train[:, 1]).predict(xte)
    pred = np.zeros(len(test))
    for t in np.unique(test[:, 0]):
        a, b = train[:, 0] == t, test[:, 0] == t
        pred[b] = Ridge(alpha=alpha).fit(xtr[a], train[a, 1]).predict(xte[b])
    return pred


def baselines(data, s):
    chosen = f"{data}/ridge_alphas.json"
    if not os.path.exists(chosen):
        _, vtrain = read(f"{data}/split.0.train.csv")
        _, vtest = read(f"{data}/split.0.test.csv")
        best = {}
        for name, pooled in (("single_task_ridge", False), ("pooled_ridge", True)):
            scores = {a: explained_variance(vtest[:, 1], fit_predict(vtrain, vtest, a, pooled))
                      for a in (0.1, 1, 10, 100, 1000)}
            best[name] = max(scores, key=scores.get)
        json.dump(best, open(chosen, "w"))
    best = json.load(open(chosen))
    _, train = read(f"{data}/split.{s}.train.csv")
    _, test = read(f"{data}/split.{s}.test.csv")
    for name, pooled in (("single_task_ridge", False), ("pooled_ridge", True)):
        ev = explained_variance(test[:, 1], fit_predict(train, test, best[name], pooled))
        print(f"{s},{name},{ev:.6f}")


def generate(path, tasks=100, groups=4, features=40, samples=1000, c=0.8, seed=7):
    """Tasks as parasol's generator draws them: W = Z Omega sqrt(m), y = w . x + noise."""
    rng = np.random.default_rng(seed)
    g = np.arange(tasks) % groups
    omega = np.where(g[:, None] == g[None, :], c, np.where(g[:, None] // 2 == g[None, :] // 2, -c, 0.0))
    omega = (omega + (1 - c) * np.eye(tasks)) / tasks
    w = rng.standard_normal((features, tasks)) @ omega * np.sqrt(tasks)
    with open(path, "w") as f:
        f.write("task,y," + ",".join(f"x{i + 1}" for i in range(features)) + "\n")
        for t in range(tasks):
            x = rng.standard_normal((samples, features))
            y = x @ w[:, t] + 0.5 * rng.standard_normal(samples)
            for i in range(samples):
                f.write(f"{t + 1},{y[i]:.6f}," + ",".join(f"{v:.6f}" for v in x[i]) + "\n")


def summary(out):
    acc = list(csv.DictReader(open(f"{out}/mtrl_accuracy.csv")))
    runs = list(csv.DictReader(open(f"{out}/mtrl_runs.csv")))
    lines = ["School, 10 random 70/30 splits: explained variance on held-out students (mean, std, min, max)"]
    by = {}
    for r in acc:
        by.setdefault(r["method"], []).append(float(r["explained_variance"]))
    for m, v in by.items():
        lines.append(f"  {m:18s} {statistics.mean(v):.4f} +- {statistics.stdev(v):.4f}  [{min(v):.4f}, {max(v):.4f}]")
    wins = {m: sum(a > b for a, b in zip(by["mtrl"], v)) for m, v in by.items() if m != "mtrl"}
    lines.append("  mtrl above on splits: " + ", ".join(f"{m} {w}/10" for m, w in wins.items()))
    lines.append("Time to converge (median of repetitions, spread), 1 and 2 processes interleaved")
    med = {}
    for d in sorted({r["data"] for r in runs}):
        for np_ in ("1", "2"):
            t = [float(r["seconds"]) for r in runs if r["data"] == d and r["processes"] == np_]
            it = [r["iterations"] for r in runs if r["data"] == d and r["processes"] == np_]
            obj = [r["objective"] for r in runs if r["data"] == d and r["processes"] == np_]
            med[d, np_] = statistics.median(t)
            lines.append(f"  {d:14s} {np_} process(es): {med[d, np_]:.3f} s [{min(t):.3f}, {max(t):.3f}]"
                         f"  iterations {'/'.join(it)}  objective {obj[0]}")
        lines.append(f"  {d:14s} 2 processes are {med[d, '1'] / med[d, '2']:.2f}x one")
    text = "\n".join(lines)
    print(text)
    open(f"{out}/mtrl_summary.txt", "w").write(text + "\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    names = list(by)
    a.boxplot([by[n] for n in names], labels=[n.replace("_", "\n") for n in names])
    a.set_ylabel("explained variance (held-out students)")
    a.set_title("School, 10 splits")
    sets = sorted({r["data"] for r in runs})
    for i, np_ in enumerate(("1", "2")):
        b.bar([j + 0.4 * i for j in range(len(sets))], [med[d, np_] for d in sets], 0.4, label=f"{np_} process(es)")
    b.set_xticks([j + 0.2 for j in range(len(sets))], sets)
    b.set_ylabel("seconds to converge (median)")
    b.legend()
    fig.tight_layout()
    fig.savefig(f"{out}/mtrl_curves.png", dpi=100)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "splits":
        splits(sys.argv[2], sys.argv[3])
    elif cmd == "baselines":
        baselines(sys.argv[2], int(sys.argv[3]))
    elif cmd == "generate":
        generate(sys.argv[2])
    elif cmd == "summary":
        summary(sys.argv[2])
