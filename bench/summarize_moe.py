"""Tables and pictures of bench/moe_bench.sh's runs.

Usage: summarize_moe.py OUT_DIR    (reads moe_{dense,moe,moe-nobalance}.csv and moe_speed.csv there;
                                    writes moe_curves.png beside them)
"""
import csv
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def tail_median(rs, field, share=0.2):
    """Median of a per-step field over the last `share` of the run."""
    values = [float(r[field]) for r in rs[int(len(rs) * (1 - share)):]]
    return statistics.median(values)


def main():
    out = sys.argv[1]
    runs = {name: rows(f"{out}/moe_{name}.csv") for name in ("dense", "moe", "moe-nobalance")}
    evals = {name: [(int(r["step"]) + 1, float(r["val_loss"])) for r in rs if r["val_loss"]]
             for name, rs in runs.items()}
    print("Convergence (2 ranks, equal steps and batch):")
    print("| run | validation loss (last) | perplexity | expert load max/mean (last 20% of steps) | dropped (last 20%) |")
    print("|---|---|---|---|---|")
    for name, rs in runs.items():
        last = evals[name][-1][1]
        load = tail_median(rs, "expert_load_max_over_mean") if name != "dense" else float("nan")
        dropped = tail_median(rs, "dropped_fraction") if name != "dense" else float("nan")
        print(f"| {name} | {last:.4f} | {2.718281828 ** last:.3f} | {load:.3f} | {100 * dropped:.2f}% |")
    gain = 1 - evals["moe"][-1][1] / evals["dense"][-1][1]
    print(f"MoE validation loss {100 * gain:.1f}% below dense (target 3%)")

    speed = rows(f"{out}/moe_speed.csv")
    med = statistics.median

    def ratio(test, a, b, field="tokens_per_sec"):
        by = {}
        for r in speed:
            if r["test"] == test and r[field]:
                by.setdefault(r["run"], {})[r["system"]] = float(r[field])
        xs = [v[a] / v[b] for v in by.values() if a in v and b in v]
        return f"{med(xs):.3f}x (range {min(xs):.3f}-{max(xs):.3f}, {len(xs)} runs)"

    print("\n| test | system | tokens/s (median) | parameters on rank 0 | peak RSS MB |")
    print("|---|---|---|---|---|")
    for test, system in (("moe", "parasol"), ("moe", "pytorch"), ("tp", "parasol-t1"), ("tp", "parasol-t2")):
        rs = [r for r in speed if r["test"] == test and r["system"] == system]
        tps = med(float(r["tokens_per_sec"]) for r in rs)
        p = rs[0]["parameters_rank0"] or "-"
        rss = f"{med(float(r['peak_rss_mb']) for r in rs):.0f}" if rs[0]["peak_rss_mb"] else "-"
        print(f"| {test} | {system} | {tps:.0f} | {p} | {rss} |")
    print(f"parasol / PyTorch, MoE at 2 ranks: {ratio('moe', 'parasol', 'pytorch')} (target 1.3x)")
    print(f"tensor parallel 2 / 1: {ratio('tp', 'parasol-t2', 'parasol-t1')} (target 1.5x)")
    print(f"parameters per rank, T=2 / T=1: {ratio('tp', 'parasol-t2', 'parasol-t1', 'parameters_rank0')}")

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for name, rs in runs.items():
        steps = [int(r["step"]) + 1 for r in rs]
        loss = [float(r["loss"]) for r in rs]
        k = 25
        smooth = [statistics.fmean(loss[max(0, i - k):i + 1]) for i in range(len(loss))]
        line, = a.plot(steps, smooth, alpha=0.5, label=f"{name} (training, mean of {k} steps)")
        a.plot([s for s, _ in evals[name]], [v for _, v in evals[name]], "o-", color=line.get_color(),
               label=f"{name} (validation)")
        if name != "dense":
            b.plot(steps, [float(r["expert_load_max_over_mean"]) for r in rs], label=name)
    a.set_xlabel("step")
    a.set_ylabel("loss (nats per character)")
    a.set_ylim(top=2.5)
    a.set_title("Dense against mixture of experts")
    a.legend(fontsize=7)
    b.axhline(1.25, color="gray", linestyle="--", label="target 1.25")
    b.set_xlabel("step")
    b.set_ylabel("busiest expert's tokens / mean")
    b.set_title("Expert load, with and without the balance loss")
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/moe_curves.png", dpi=110)


if __name__ == "__main__":
    main()
