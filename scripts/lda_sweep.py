#!/usr/bin/env python3
"""Choosing K: `parasol lda` trained once per number of topics, with the held-out perplexity of the
test documents and the topics' mean coherence (UMass, NPMI) at the end of each run, in a table
(DIR/sweep.csv) and a plot against K (DIR/sweep.png). Lower perplexity and higher coherence are
better; they often disagree, which is why both are drawn.

  .venv/bin/python scripts/lda_sweep.py --corpus TRAIN --test TEST --topics 10,20,50,100 \\
      --iterations 200 --out DIR [--parasol build/tools/parasol] [-- more lda options]
"""
import argparse
import csv
import os
import subprocess
import sys


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", required=True, help="training corpus (any format parasol lda reads)")
    p.add_argument("--test", required=True, help="held-out documents (scored by document completion)")
    p.add_argument("--topics", required=True, help="comma-separated numbers of topics, e.g. 10,20,50")
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--out", required=True, help="folder for sweep.csv, sweep.png and each run's metrics")
    p.add_argument("--parasol", default="parasol", help="the parasol command (default: parasol on PATH)")
    p.add_argument("lda_args", nargs="*", help="more options for parasol lda, after --")
    args = p.parse_args()
    try:
        args.ks = sorted({int(k) for k in args.topics.split(",")})
    except ValueError:
        p.error(f"--topics {args.topics}: expected comma-separated whole numbers")
    if not args.ks or args.ks[0] < 2:
        p.error("--topics: every K must be at least 2")
    return args


def run(args, k):
    metrics = os.path.join(args.out, f"metrics_k{k}.csv")
    cmd = [args.parasol, "lda", "--corpus", args.corpus, "--test", args.test, "--topics", str(k),
           "--iterations", str(args.iterations), "--eval-every", "0", "--metrics", metrics, *args.lda_args]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(f"lda_sweep: K {k}: {' '.join(cmd)} exited {done.returncode}:\n{done.stderr.strip()}", file=sys.stderr)
        sys.exit(done.returncode)
    last = list(csv.DictReader(open(metrics)))[-1]
    return {"topics": k, "seconds": float(last["seconds"]), "loglik_per_token": float(last["loglik_per_token"]),
            "test_perplexity": float(last["test_perplexity"]), "umass": float(last["umass"]),
            "npmi": float(last["npmi"])}


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ks = [r["topics"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, key, label in zip(axes, ["test_perplexity", "umass", "npmi"],
                              ["held-out perplexity (lower is better)", "mean UMass coherence (higher is better)",
                               "mean NPMI coherence (higher is better)"]):
        ax.plot(ks, [r[key] for r in rows], marker="o")
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set_xlabel("topics K")
        ax.set_title(label, fontsize=10)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    print(f"{'K':>7} {'seconds':>9} {'loglik/tok':>11} {'test ppl':>10} {'UMass':>9} {'NPMI':>8}", flush=True)
    for k in args.ks:
        r = run(args, k)
        rows.append(r)
        print(f"{k:>7} {r['seconds']:>9.2f} {r['loglik_per_token']:>11.5f} {r['test_perplexity']:>10.2f} "
              f"{r['umass']:>9.3f} {r['npmi']:>8.4f}", flush=True)
    with open(os.path.join(args.out, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    plot(rows, os.path.join(args.out, "sweep.png"))
    print(f"# {args.out}/sweep.csv and {args.out}/sweep.png", flush=True)


if __name__ == "__main__":
    main()
