"""Summary of bench/ps_reads_bench.sh: the table and the picture.

Usage: summarize_ps_reads.py RAW PNG CLOCKS
RAW lines: "run WHERE READS CONSISTENCY RUN TRAIN_S OBJECTIVE COMMAND_S LINK_BYTES".
"""
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def spread(values, digits=3):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main(raw, png, clocks):
    runs = {}
    with open(raw) as f:
        for line in f:
            if not line.startswith("run "):
                continue
            _, where, reads, consistency, r, train, objective, command, link = line.split()
            runs.setdefault((where, consistency), {}).setdefault(reads, {})[int(r)] = (
                float(train), float(objective), float(command), int(link))
    print("| where | model | two-sided training (s) | one-sided training (s) | one-sided / two-sided "
          "(paired) | whole command, two / one (s) | final objective, two / one | link MB per clock, "
          "two / one |")
    print("|---|---|---|---|---|---|---|---|")
    cases, medians = [], []
    for (where, consistency), by in runs.items():
        two, one = by["two-sided"], by["one-sided"]
        paired = [one[r][0] / two[r][0] for r in two if r in one]
        link = "-"
        if any(v[3] for v in two.values()):
            link = " / ".join(f"{statistics.median(v[3] for v in s.values()) / clocks / 1e6:.2f}"
                              for s in (two, one))
        print(f"| {where} | {consistency} | {spread([v[0] for v in two.values()])} | "
              f"{spread([v[0] for v in one.values()])} | {statistics.median(paired):.2f}x "
              f"({min(paired):.2f}-{max(paired):.2f}) | "
              f"{statistics.median(v[2] for v in two.values()):.2f} / "
              f"{statistics.median(v[2] for v in one.values()):.2f} | "
              f"{statistics.median(v[1] for v in two.values()):.6f} / "
              f"{statistics.median(v[1] for v in one.values()):.6f} | {link} |")
        cases.append(f"{where}\n{consistency}")
        medians.append((statistics.median(v[0] for v in two.values()),
                        statistics.median(v[0] for v in one.values())))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    xs = range(len(cases))
    ax.bar([x - 0.2 for x in xs], [m[0] for m in medians], 0.4, label="two-sided (ask the shard)")
    ax.bar([x + 0.2 for x in xs], [m[1] for m in medians], 0.4, label="one-sided (get its memory)")
    ax.set_xticks(list(xs), cases)
    ax.set_ylabel("training time (s, median)")
    ax.set_title("Parameter-server row reads: MF on MovieLens 100K, 2 processes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
