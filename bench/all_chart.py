#!/usr/bin/python3
# all_chart.py: the PNG chart of bench/all.sh's table.
#
#   /usr/bin/python3 bench/all_chart.py TABLE.tsv OUT.png
#
# One horizontal bar per row that has a goal: how far the ratio is from
# its goal, as "goal reached" = 1.0 (ratio / goal for a goal ">= g",
# goal / ratio for "<= g"; for the accuracy row, ">= -0.2 points", the
# bar is 1 + (difference + 0.2)).  Green: met; red: not met.  Each bar is
# labelled with the ratio and the goal as the table states them.  Rows
# without a goal, or whose benchmark failed, are listed under the chart.
# Needs Debian's python3-matplotlib.
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def progress(ratio, goal):
    g = float(goal[2:])
    r = float(ratio)
    if g <= 0:                      # a difference in points, not a ratio
        return max(0.0, 1.0 + (r - g))
    if goal.startswith(">="):
        return max(0.0, r / g)
    return g / r if r > 0 else 0.0


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: all_chart.py TABLE.tsv OUT.png")
    with open(sys.argv[1], newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    bars, other = [], []
    for r in rows:
        label = f"{r['area']}: {r['measure']}"
        if r["goal"] in ("-", "") or r["ratio"] in ("failed", "", "-"):
            other.append(f"{label}: {r['ratio']}")
            continue
        bars.append((label, progress(r["ratio"], r["goal"]), r["ratio"], r["goal"], r["met"] == "yes"))
    fig, ax = plt.subplots(figsize=(13, 0.42 * len(bars) + 1.6 + 0.16 * len(other)))
    ys = range(len(bars))
    ax.barh(list(ys), [b[1] for b in bars], color=["#3a7" if b[4] else "#c44" for b in bars])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([b[0] if len(b[0]) < 80 else b[0][:77] + "..." for b in bars], fontsize=8)
    ax.invert_yaxis()
    for y, b in zip(ys, bars):
        ax.text(b[1], y, f"  {b[2]} (goal {b[3]})", va="center", fontsize=8)
    ax.set_xlabel("progress to the goal (1.0 = goal reached)")
    ax.set_xlim(0, max([1.6] + [b[1] * 1.5 for b in bars]))
    ax.set_title("bench/all.sh: madlib_dl against its peers")
    foot = 0.0
    if other:
        text = "without a goal (ratios):\n" + "\n".join(other)
        foot = (len(other) + 1) * 0.16 / fig.get_figheight() + 0.02
        fig.text(0.01, 0.01, text, fontsize=7, va="bottom")
    fig.tight_layout(rect=(0, foot, 1, 1))
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
