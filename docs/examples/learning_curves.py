"""learning_curves.py: plots of a madlib_dl fit_multiple run (and of the
rungs of a madlib_keras_automl run), read over SQL.

Used by the notebook fit_multiple_fashion_mnist.ipynb and by
scripts/demo.sh; also a command:

    /usr/bin/python3 docs/examples/learning_curves.py MODEL_TABLE OUTDIR

reads MODEL_TABLE_info (made by madlib_dl.fit_multiple) from the server
that the PG* environment variables name (PGHOST, PGPORT, PGUSER,
PGDATABASE, PGPASSWORD) and writes into OUTDIR:

    learning_curves.png            loss and metric, training and validation,
                                   against iterations and against seconds
    metrics.png                    every metric of compile_params (the
                                   info table's metrics column), one panel
                                   each, against iterations
    learning_curve_mst_key_K.png   the same for each configuration alone

Needs Debian's python3-psycopg2, python3-pandas and python3-matplotlib
(scripts/install-deps.sh installs them).

IDENTIFICATION
    docs/examples/learning_curves.py
"""

import os
import sys

import matplotlib

if __name__ == "__main__":
    matplotlib.use("Agg")  # files only (the notebook keeps its inline backend)
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator
import pandas as pd
import psycopg2
from psycopg2 import sql as pgsql

FASHION_CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                   "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]


def read_info(conn, model_table):
    """The rows of <model_table>_info (one per configuration, ordered by
    mst_key) as a pandas DataFrame; array columns become Python lists.
    model_table may be 'name' or 'schema.name' (not quoted)."""
    parts = model_table.split(".")
    info = pgsql.Identifier(*parts[:-1], parts[-1] + "_info")
    query = pgsql.SQL(
        "SELECT mst_key, model_id, compile_params, fit_params, model_size,"
        "       metrics_type[1] AS metric, loss_type, status,"
        "       training_metrics_final, training_loss_final,"
        "       validation_metrics_final, validation_loss_final,"
        "       training_metrics, training_loss, validation_metrics,"
        "       validation_loss, metrics_iters, metrics_elapsed_time,"
        "       pg_catalog.to_jsonb(i) -> 'metrics' AS metrics_all"
        "  FROM {} i ORDER BY mst_key").format(info)
    with conn.cursor() as cur:
        cur.execute(query)
        cols = [d[0] for d in cur.description]
        return pd.DataFrame(cur.fetchall(), columns=cols)


def label(row, key=True):
    """A short legend label: mst_key, model_id, optimizer and fit_params."""
    opt = row["compile_params"]
    opt = opt.split("optimizer=")[1].split(")")[0].strip("'\"") + ")" \
        if "optimizer=" in opt else opt
    text = "model_id %d, %s, %s" % (row["model_id"], opt, row["fit_params"])
    return ("%d: " % row["mst_key"] + text) if key else text


def plot_learning_curves(info, title=None, axes=None):
    """Four panels for every configuration of info (read_info): loss and
    metric against iterations and against elapsed seconds; training solid,
    validation dashed.  Returns the figure."""
    if axes is None:
        fig, axes = plt.subplots(2, 2, figsize=(14, 9))
    else:
        fig = axes[0][0].figure
    metric = info["metric"].dropna().iloc[0] if info["metric"].notna().any() else "metric"
    cmap = plt.get_cmap("tab10" if len(info) <= 10 else "tab20")
    panels = [(0, 0, "loss", "metrics_iters", "iteration"),
              (0, 1, "metrics", "metrics_iters", "iteration"),
              (1, 0, "loss", "metrics_elapsed_time", "elapsed seconds"),
              (1, 1, "metrics", "metrics_elapsed_time", "elapsed seconds")]
    for i, row in info.reset_index(drop=True).iterrows():
        color = cmap(i % cmap.N)
        for r, c, what, xcol, _ in panels:
            ax = axes[r][c]
            x = row[xcol]
            if x is None:
                continue
            for kind, style in (("training", "-"), ("validation", "--")):
                y = row["%s_%s" % (kind, what)]
                if y is None:
                    continue
                ax.plot(x, y, style, color=color, marker="o", markersize=3,
                        label=label(row) if (kind == "training" and r == 0 and c == 0) else None)
    for r, c, what, _, xlabel in panels:
        ax = axes[r][c]
        if r == 0:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(xlabel)
        ax.set_ylabel(metric if what == "metrics" else "loss")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_title("loss (solid: training, dashed: validation)")
    axes[0][1].set_title("%s (solid: training, dashed: validation)" % metric)
    axes[0][0].legend(fontsize=7, loc="upper right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def metric_names(info):
    """The metrics every row's metrics column records, in the order of
    the first row that has them ([] without that column)."""
    names = []
    for m in info.get("metrics_all", pd.Series(dtype=object)):
        for kind in ("training", "validation"):
            for name in (m or {}).get(kind, {}) or {}:
                if name not in names:
                    names.append(name)
    # jsonb keeps its own key order: put them back in compile_params' order
    cp = str(info["compile_params"].iloc[0]) if len(info) else ""
    return sorted(names, key=lambda n: (cp.find("'%s'" % n) % (len(cp) + 1), n))


def plot_metrics(info, title=None):
    """One panel per metric of the info table's metrics column (several
    metrics in compile_params: accuracy, auc, precision, ...) against
    iterations, every configuration; training solid, validation dashed.
    None when the rows record no metric."""
    names = metric_names(info)
    if not names:
        return None
    cols = min(len(names), 2)
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(7 * cols, 4.5 * rows), squeeze=False)
    cmap = plt.get_cmap("tab10" if len(info) <= 10 else "tab20")
    for i, row in info.reset_index(drop=True).iterrows():
        m = row.get("metrics_all") or {}
        x = row["metrics_iters"]
        if x is None:
            continue
        for j, name in enumerate(names):
            ax = axes[j // cols][j % cols]
            for kind, style in (("training", "-"), ("validation", "--")):
                y = (m.get(kind) or {}).get(name)
                if y is None:
                    continue
                y = [float("nan") if v is None else v for v in y]
                ax.plot(x[:len(y)], y, style, color=cmap(i % cmap.N), marker="o", markersize=3,
                        label=label(row) if (kind == "training" and j == 0) else None)
    for j, name in enumerate(names):
        ax = axes[j // cols][j % cols]
        ax.set_title("%s (solid: training, dashed: validation)" % name)
        ax.set_xlabel("iteration")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3)
    for j in range(len(names), rows * cols):
        axes[j // cols][j % cols].axis("off")
    axes[0][0].legend(fontsize=7, loc="lower right")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def read_automl_info(conn, model_table):
    """The rows of <model_table>_info made by madlib_dl.madlib_keras_automl,
    with each configuration's rungs (rung_iters, rung_losses, rung_metrics,
    rung_promoted) and, for Hyperband, its bracket s."""
    parts = model_table.split(".")
    info = pgsql.Identifier(*parts[:-1], parts[-1] + "_info")
    with conn.cursor() as cur:
        cur.execute(pgsql.SQL("SELECT * FROM {} ORDER BY mst_key").format(info))
        cols = [d[0] for d in cur.description]
        return pd.DataFrame(cur.fetchall(), columns=cols)


def plot_rungs(info, title=None, ax=None):
    """The rungs of an AutoML run (read_automl_info): each configuration's
    validation metric (training metric without a validation table) at the
    end of every rung it trained, against its iterations; one colour per
    Hyperband bracket (per configuration otherwise); a filled marker where
    it went on to the next rung, a cross where it did not.  Returns the
    figure."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(10, 6))
    else:
        fig = ax.figure
    cmap = plt.get_cmap("tab10")
    groups = sorted(info["s"].unique(), reverse=True) if "s" in info else None
    for i, row in info.reset_index(drop=True).iterrows():
        color = cmap(groups.index(row["s"]) % 10) if groups is not None else cmap(i % 10)
        x, y, promoted = row["rung_iters"], row["rung_metrics"], row["rung_promoted"]
        if not x or y is None:
            continue
        ax.plot(x, y, "-", color=color, alpha=0.6, linewidth=1)
        for xi, yi, p in zip(x, y, promoted):
            ax.plot([xi], [yi], "o" if p else "x", color=color, markersize=7 if p else 6)
        ax.annotate(str(row["mst_key"]), (x[-1], y[-1]), textcoords="offset points", xytext=(4, 2),
                    fontsize=7, color=color)
    if groups is not None:
        for g in groups:
            ax.plot([], [], "-o", color=cmap(groups.index(g) % 10), label="bracket s=%d" % g)
    ax.plot([], [], "ko", label="went on")
    ax.plot([], [], "kx", label="did not go on")
    ax.set_xscale("log", base=3)
    ax.set_xlabel("iterations trained (log scale)")
    ax.set_ylabel("validation metric at the end of the rung")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def plot_confusion_matrix(matrix, classes, title=None, ax=None):
    """A heat map of a confusion matrix (rows: true class, columns:
    predicted class), with the counts written in the cells."""
    if ax is None:
        fig, ax = plt.subplots(figsize=(8, 7))
    else:
        fig = ax.figure
    im = ax.imshow(matrix, cmap="Blues")
    ax.set_xticks(range(len(classes)))
    ax.set_xticklabels(classes, rotation=45, ha="right")
    ax.set_yticks(range(len(classes)))
    ax.set_yticklabels(classes)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    top = matrix.max() if matrix.size else 0
    for i in range(matrix.shape[0]):
        for j in range(matrix.shape[1]):
            ax.text(j, i, int(matrix[i, j]), ha="center", va="center", fontsize=8,
                    color="white" if matrix[i, j] > top / 2 else "black")
    fig.colorbar(im, ax=ax)
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig


def write_pngs(conn, model_table, outdir):
    """Write learning_curves.png, metrics.png (when the runs record
    metrics) and one learning_curve_mst_key_K.png per configuration into
    outdir; returns the paths written."""
    os.makedirs(outdir, exist_ok=True)
    info = read_info(conn, model_table)
    paths = []
    fig = plot_learning_curves(info, title="fit_multiple %s: %d configurations"
                               % (model_table, len(info)))
    path = os.path.join(outdir, "learning_curves.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    paths.append(path)
    fig = plot_metrics(info, title="fit_multiple %s: every metric" % model_table)
    if fig is not None:
        path = os.path.join(outdir, "metrics.png")
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)
    for _, row in info.iterrows():
        fig = plot_learning_curves(info[info["mst_key"] == row["mst_key"]],
                                   title="mst_key %d: %s" % (row["mst_key"], label(row, key=False)))
        path = os.path.join(outdir, "learning_curve_mst_key_%d.png" % row["mst_key"])
        fig.savefig(path, dpi=80)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: %s MODEL_TABLE OUTDIR\n" % argv[0])
        return 2
    conn = psycopg2.connect("")  # PG* environment variables
    try:
        for path in write_pngs(conn, argv[1], argv[2]):
            print(path)
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
