"""One plotting style for the whole book: one colour per method, the same everywhere.

Each method's colour is part of its registry entry (`unlearning.methods`). Colours of NPO+KLR,
GradDiff (the MASC paper's "GA+GDR"), SimNPO and MASC follow the MASC summary figure (masc.md
section 16); SAGO-paper objectives reuse the same family colours.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.patches import Patch

from unlearning.margin import violation_rate
from unlearning.methods import method_name

# every method's colour in every plot (a registered method without one is a neutral grey)
METHOD_COLORS = {
    "GA": "#6BAF8A",
    "GradDiff": "#3A9363",
    "GA+KLR": "#2E7A50",
    "NPO": "#5C86B3",
    "NPO+GD": "#1F4468",
    "NPO+KLR": "#2F5D8A",
    "SimNPO": "#D17C2F",
    "SimNPO+GD": "#B8651F",
    "RMU": "#7B4FA0",
    "IdkNLL": "#8C8C8C",
    "MASC": "#C84545",
}
REFERENCE_COLORS = {"Target": "#222222", "Oracle": "#9A9A9A", "Base": "#B8860B"}  # Base: a checkpoint before fine-tuning


def method_color(name: str) -> str:
    """The method's colour (`METHOD_COLORS`); black for the target, grey for the oracle, dark gold
    for a base checkpoint, a neutral grey for any other name."""
    return METHOD_COLORS.get(name) or REFERENCE_COLORS.get(name, "#555555")


DIVERGED = "diverged"  # how a table shows a metric of a run that diverged (NaN)


def show_nan_as_diverged() -> None:
    """Tables of this notebook (pandas DataFrames and Stylers without a format of their own)
    print NaN as "diverged": the book's tables have no other NaN, and a diverged run's metrics
    are NaN (`evaluate.DivergedMetrics`)."""
    pd.set_option("styler.format.na_rep", DIVERGED)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebooks' kernel
        return
    shell = get_ipython()
    if shell is not None:
        html = shell.display_formatter.formatters["text/html"]
        html.for_type(pd.DataFrame, lambda frame: frame.to_html(na_rep=DIVERGED, max_rows=60, max_cols=30))


def use_book_style() -> None:
    """Matplotlib defaults for every figure of the book; styled tables show NaN, the metric of a
    diverged run (`evaluate.DivergedMetrics`), as "diverged"."""
    show_nan_as_diverged()
    plt.rcParams.update({
        "figure.dpi": 110, "savefig.dpi": 110, "figure.figsize": (6.4, 3.6), "axes.spines.top": False,
        "axes.spines.right": False, "axes.grid": True, "grid.color": "#DDDDDD", "grid.linewidth": 0.6,
        "axes.axisbelow": True, "font.size": 10, "legend.frameon": False,
    })


def plot_violation_trace(probes: Sequence[tuple[int, str, int, float]], tolerance: float, ax=None, label: str = "MASC"):
    """Violation rate at every trigger probe, confirmations as rings, the tolerance as a line.

    `probes` are `(step, stage, n, rate)` tuples as recorded by `ViolationStop.history`.
    """
    ax = ax if ax is not None else plt.gca()
    trigger = [(s, r) for s, stage, _, r in probes if stage == "trigger"]
    confirm = [(s, r) for s, stage, _, r in probes if stage == "confirm"]
    color = method_color(label)
    if trigger:
        ax.plot(*zip(*trigger), marker="o", markersize=3, color=color, label=f"{label}: trigger probe")
    if confirm:
        ax.scatter(*zip(*confirm), s=60, facecolors="none", edgecolors="black", zorder=3, label="confirmation probe")
    ax.axhline(tolerance, color="black", linestyle="--", linewidth=1, label=f"tolerance {tolerance:g}")
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("violation rate $\\hat V$")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="upper right")
    return ax


def plot_forget_retain(rows: Sequence[dict], ax=None):
    """Grouped bars of forget and retain answer probability, one pair per row.

    Each row needs `name`, `forget` and `retain`; the bar edge takes the method colour.
    """
    ax = ax if ax is not None else plt.gca()
    names = [row["name"] for row in rows]
    xs = range(len(rows))
    width = 0.38
    for offset, key, hatch in ((-width / 2, "forget", "//"), (width / 2, "retain", "")):
        ax.bar([x + offset for x in xs], [row[key] for row in rows], width, hatch=hatch,
               color=[method_color(n) for n in names], alpha=0.85, edgecolor="black", linewidth=0.6,
               label=f"{key} set")
    ax.set_xticks(list(xs), names)
    ax.set_ylabel("mean answer probability")
    ax.set_ylim(0, 1.05)
    handles = [Patch(facecolor="white", edgecolor="black", hatch="//", label="forget set"),
               Patch(facecolor="white", edgecolor="black", label="retain set")]
    ax.legend(handles=handles, loc="upper right")
    return ax


def plot_radar(ax, axes: Sequence[str], series: dict[str, Sequence[float]], ylim: tuple[float, float] = (0, 1)):
    """A radar (polar) chart on a polar `ax`: one closed polygon per name in `series`, each
    with its method colour; values are drawn as given (orient them so larger is better)."""
    angles = np.linspace(0, 2 * np.pi, len(axes), endpoint=False).tolist()
    for name, values in series.items():
        values = list(values)
        ax.plot(angles + angles[:1], values + values[:1], color=method_color(name), linewidth=1.6, label=name)
        ax.fill(angles + angles[:1], values + values[:1], color=method_color(name), alpha=0.06)
    ax.set_xticks(angles, axes)
    ax.set_ylim(*ylim)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.08, 1.05))
    return ax


# update rules of the SAGO paper (chapters 10-12 and 15): colour per rule, marker per variant (its Fig. 3)
RULE_COLORS = {"-": "#8C8C8C", "sum": "#2F5D8A", "pcgrad_global": "#7FB3D5", "pcgrad": "#3A9363",
               "sago": "#C84545", "sago_additive": "#E39A9A"}
VARIANT_MARKERS = {"forget-only": "o", "+GD": "s", "+GD+pcgrad_global": "v", "+GD+pcgrad": "^", "+GD+sago": "*",
                   "+GD+sago_additive": "P"}


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """The non-dominated points when x is minimised and y maximised, sorted by x."""
    front = []
    for x, y in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or y > front[-1][1]:
            front.append((x, y))
    return front


def plot_pareto(ax, frame, x: str, y: str):
    """Runs of one objective as (x: forget metric, lower better; y: retain metric, higher
    better): marker by variant, colour by rule, a line along each rule's Pareto front.
    `frame` needs columns `variant`, `rule`, `x` and `y`."""
    for (variant, rule), part in frame.groupby(["variant", "rule"], sort=False):
        color = RULE_COLORS.get(rule, "#555555")
        ax.scatter(part[x], part[y], marker=VARIANT_MARKERS.get(variant, "o"), s=90 if variant.endswith("sago") else 50,
                   color=color, edgecolor="black", linewidth=0.5, label=variant, zorder=3)
        front = pareto_front(list(zip(part[x], part[y])))
        if len(front) > 1:
            ax.plot(*zip(*front), color=color, linewidth=1, alpha=0.8, zorder=2)
    return ax


def plot_forget_neighbour_panels(results, start: dict, objectives: Sequence[str], extra=None):
    """The SAGO paper's Fig. 4: one panel per objective, forget metric (lower is better) against
    neighbour metric (higher is better), markers by variant; dashed lines at the start model.
    `results` has columns objective, variant, rule, forget, neighbour; `start` the start
    model's forget and neighbour; `extra` optional {label: (forget, neighbour)} points drawn in
    every panel (e.g. MASC)."""
    fig, axs = plt.subplots(1, len(objectives), figsize=(4.2 * len(objectives), 3.8), sharey=True, squeeze=False)
    for ax, objective in zip(axs[0], objectives):
        plot_pareto(ax, results[results.objective == objective], "forget", "neighbour")
        for label, (x, y) in (extra or {}).items():
            ax.scatter([x], [y], marker="D", s=60, color=method_color(label), edgecolor="black", linewidth=0.5,
                       label=label, zorder=4)
        ax.axhline(start["neighbour"], color="black", linestyle="--", linewidth=0.8)
        ax.axvline(start["forget"], color="black", linestyle="--", linewidth=0.8)
        ax.set_title(method_name(objective, "sago"))
        ax.set_xlabel("forget ROUGE-L (lower is better)")
    axs[0][0].set_ylabel("neighbour ROUGE-L")
    axs[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


QUANT_KEYS = (("forget_Q_A_ROUGE", "forget ROUGE-L"), ("forget_Q_A_Prob", "forget Prob"))
PRECISION_MARKERS = {"fp32": "o", "nf4": "s", "fp4": "^"}


def plot_quantization_dumbbell(frame, names: Sequence[str], oracle: dict, keys=QUANT_KEYS):
    """The 4-bit check (MASC paper, after Zhang et al.): per model a row joining its forget
    metrics in full precision (circle) and after each 4-bit code (NF4 square, FP4 triangle), one
    panel per metric, the oracle dotted. `frame` has columns method, precision and the `keys`."""
    fig, axs = plt.subplots(1, len(keys), figsize=(11, 0.45 * len(names) + 1.5), sharey=True)
    for ax, (key, title) in zip(axs, keys):
        for y, name in enumerate(names):
            part = frame[frame.method == name].set_index("precision")[key]
            ax.plot([part.min(), part.max()], [y, y], color="grey", linewidth=1, zorder=1)
            for precision, value in part.items():
                ax.scatter(value, y, marker=PRECISION_MARKERS.get(precision, "o"), s=55, color=method_color(name),
                           edgecolor="black", linewidth=0.5, zorder=2, label=precision if y == 0 else None)
        ax.axvline(oracle[key], color="grey", linestyle=":", linewidth=1, label="oracle")
        ax.set_yticks(range(len(names)), names)
        ax.set_title(title)
        ax.set_xlim(0, 1.02)
    axs[-1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


TIME_PANELS = (("forget_quality", "forget quality (KS p-value)", True), ("forget_Q_A_ROUGE", "forget ROUGE-L", False),
               ("model_utility", "model utility", False))


def plot_time_to_quality(trajectories: dict[str, Sequence[dict]], oracle: dict, criterion, reached: dict,
                         panels=TIME_PANELS):
    """One panel per metric of `panels` against seconds into the run, a line per method through
    its start, checkpoints and final model (`trajectory.trajectory`); the oracle as a dashed line,
    the criterion's level band and utility floor, and a star where each method first met it
    (`reached`: method -> row or None). Returns the figure."""
    fig, axes = plt.subplots(1, len(panels), figsize=(3.7 * len(panels), 3.4), squeeze=False)
    for ax, (key, label, log) in zip(axes[0], panels):
        for method, rows in trajectories.items():
            xs, ys = [r["seconds"] for r in rows], [max(r[key], 1e-12) if log else r[key] for r in rows]
            ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.4, color=method_color(method), label=method)
            if reached.get(method) is not None:
                y = reached[method][key]
                ax.scatter([reached[method]["seconds"]], [max(y, 1e-12) if log else y], marker="*", s=140, zorder=5,
                           color=method_color(method), edgecolor="black", linewidth=0.6)
        ax.axhline(max(oracle[key], 1e-12) if log else oracle[key], color=method_color("Oracle"), linestyle="--",
                   linewidth=1.2, label="Oracle")
        if key == criterion.forget_metric:
            ax.axhspan(0, criterion.level, color="#CFE8D8", alpha=0.5, zorder=0)
        if key == criterion.utility_metric:
            ax.axhline(criterion.floor, color="#B22222", linestyle=":", linewidth=1.2, label="oracle utility")
        if log:
            ax.set_yscale("log")
        ax.set_xlabel("seconds into the run")
        ax.set_title(label)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


RADAR_AXES = ("1-ROUGE-L", "1-Prob", "Truth Ratio", "MU")  # the MASC paper's Figure 1 axes, larger is better


def plot_figure1(results, methods: Sequence[str], title: str, seconds_digits: int = 1):
    """The MASC paper's Figure 1 in miniature from a results table indexed by method (it holds
    "Target", "Oracle" and every method of `methods`): left, each run's wall-clock seconds and
    steps; right, the radar of `RADAR_AXES` with the target and the oracle. Returns the figure."""
    fig = plt.figure(figsize=(11, 4.2))
    bars = fig.add_subplot(1, 2, 1)
    seconds = results.loc[list(methods), "seconds"]
    bars.barh(list(methods), seconds, color=[method_color(m) for m in methods])
    for y, m in enumerate(methods):
        bars.text(seconds[m], y, f" {seconds[m]:.{seconds_digits}f} s ({int(results.loc[m, 'steps'])} steps)",
                  va="center", fontsize=8)
    bars.set_xlabel("wall-clock seconds")
    bars.set_title(title)
    bars.set_xlim(0, seconds.max() * 1.45)
    radar = fig.add_subplot(1, 2, 2, projection="polar")
    plot_radar(radar, RADAR_AXES, {m: [results.loc[m, k] for k in RADAR_AXES] for m in ["Target", "Oracle", *methods]})
    fig.tight_layout()
    return fig


def plot_quality_against_utility(panels: dict, size: tuple[float, float] = (4, 3.6)):
    """TOFU's summary: forget quality (the KS p-value, log scale) against model utility, one panel
    per title of `panels` (title -> results table with a "method" column or index). Returns the figure."""
    fig, axs = plt.subplots(1, len(panels), figsize=(size[0] * len(panels), size[1]), squeeze=False)
    for ax, (title, table) in zip(axs[0], panels.items()):
        rows = table.reset_index() if "method" not in table.columns else table
        for _, row in rows.iterrows():
            ax.scatter(row["model_utility"], max(row["forget_quality"], 1e-12), s=60, color=method_color(row["method"]),
                       edgecolor="black", linewidth=0.5, label=row["method"])
        ax.set_yscale("log")
        ax.set_xlabel("model utility")
        if title:
            ax.set_title(title)
    axs[0][0].set_ylabel("forget quality (KS p-value)")
    axs[0][-1].legend(fontsize=7, loc="lower left", bbox_to_anchor=(1.0, 0.0))
    fig.tight_layout()
    return fig


def plot_split_sizes(table):
    """Items per split of a rendered world (`world.summary`), one panel per benchmark, log scale.
    Returns the figure."""
    benchmarks = list(table["benchmark"].unique())
    fig, axes = plt.subplots(1, len(benchmarks), figsize=(3.0 * len(benchmarks), 4.2), squeeze=False)
    for ax, benchmark in zip(axes[0], benchmarks):
        part = table[table["benchmark"] == benchmark]
        ax.barh(part["split"], part["records"], color="#4C72B0")
        ax.set_xscale("log")
        ax.set_title(benchmark)
        ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    return fig


def plot_memorisation(scale, paraphrase_chance: float, four_choice_chance: float):
    """Verbatim (solid) and knowledge (dashed) memorisation against model size (`gates.scale_table`):
    left, the TOFU target's forget ROUGE-L, paraphrased-question and paraphrase accuracies with the
    oracle's ROUGE-L; right, the base model's probes in a trained and a held-out form. Returns the figure."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    x = scale["parameters"]
    left.plot(x, scale["target forget ROUGE-L"], "o-", label="target ROUGE-L (verbatim)")
    left.plot(x, scale["target paraphrased-question acc"], "s--", label="target paraphrased-question acc")
    left.plot(x, scale["target paraphrase acc"], "^--", label="target paraphrase acc (question and answer)")
    left.plot(x, scale["oracle forget ROUGE-L"], "o-", color="grey", label="oracle ROUGE-L")
    left.axhline(paraphrase_chance, color="grey", lw=0.8, ls=":", label="paraphrase chance")
    right.plot(x, scale["probe trained form"], "o-", label="trained form (verbatim)")
    right.plot(x, scale["probe held-out form"], "s--", label="held-out form (knowledge)")
    right.axhline(four_choice_chance, color="grey", lw=0.8, ls=":", label="chance")
    for ax, title in ((left, "TOFU-mini target"), (right, "base model probes")):
        ax.set_xscale("log")
        ax.set_xlabel("parameters")
        ax.set_ylim(0, 1.02)
        ax.set_title(title)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_margin_histograms(margins: dict, tau: float, rho: float):
    """The restricted margins of every answer token, one step histogram per model of `margins`
    (name -> (margins, mask)), clamped to [-12, 12], with its violation rate and the line tau."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    bins = np.linspace(-12, 12, 61)
    for name, (m, mask) in margins.items():
        ax.hist(m[mask].clamp(-12, 12).numpy(), bins=bins, histtype="step", linewidth=1.8, color=method_color(name),
                density=True, label=f"{name}: V = {violation_rate(m, mask, tau):.2f}")
    ax.axvline(tau, color="black", linestyle="--", linewidth=1, label=f"tau = logit({rho}) = {tau:.2f}")
    ax.set_xlabel("restricted margin $m_t$")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    return fig


def plot_violation_knobs(grid, betas: Sequence[float], k: int, beta: float, rho: float):
    """The violation rate of the target (solid) and the oracle (dashed) from `tables.violation_grid`:
    left against k at `rho` for each of `betas`, right against rho at `k` and `beta`. Returns the figure."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for b, marker in zip(betas, "os^"):
        for name, style in (("Target", "-"), ("Oracle", "--")):
            part = grid[(grid.model == name) & (grid.beta == b) & (grid.rho == rho)]
            left.plot(part.k, part.V, style, marker=marker, color=method_color(name), label=f"{name}, beta {b:g}")
    left.set_xscale("log")
    left.set_xlabel("competitor set size k")
    left.set_ylabel("violation rate V")
    left.set_title(f"rho = {rho}")
    left.legend(fontsize=7, ncol=2)
    for name, style in (("Target", "-"), ("Oracle", "--")):
        part = grid[(grid.model == name) & (grid.k == k) & (grid.beta == beta)]
        right.plot(part.rho, part.V, style, marker="o", color=method_color(name), label=name)
    right.set_xlabel("rho (tau = logit(rho))")
    right.set_title(f"k = {k}, beta = {beta:g}")
    right.legend(fontsize=8)
    for ax in (left, right):
        ax.set_ylim(-0.02, 1.02)
    fig.tight_layout()
    return fig


def plot_proposition1(table):
    """MASC's Proposition 1 on every sequence (`tables.proposition1_table`): measured
    exact-reproduction probability against the bound, log10, with the diagonal. Returns the figure."""
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    for name, part in table.groupby("model", sort=False):
        ax.scatter(part.log10_bound, part.log10_measured, s=14, alpha=0.7, color=method_color(name), label=name)
    low = min(table.log10_bound.min(), table.log10_measured.min())
    ax.plot([low, 0], [low, 0], color="black", linewidth=1, label="measured = bound")
    ax.set_xlabel("log10 bound rho^((1-v)L)")
    ax.set_ylabel("log10 measured P(continuation)")
    ax.legend(fontsize=8)
    return fig


def plot_checkpoints_against_stop(fixed, stopped_step: int, stopped: dict, oracle: dict):
    """A fixed budget's checkpoints (`fixed`: indexed by step, columns "forget ROUGE-L" and "model
    utility") as lines against the self-stopped run (stars at `stopped_step` with its metrics
    `stopped`), the oracle's forget ROUGE-L dotted. Returns the figure."""
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ax.plot(fixed.index, fixed["forget ROUGE-L"], "o-", color=method_color("MASC"), label="forget ROUGE-L (checkpoints)")
    ax.plot(fixed.index, fixed["model utility"], "s--", color=method_color("Oracle"), label="model utility (checkpoints)")
    ax.scatter([stopped_step], [stopped["forget_Q_A_ROUGE"]], marker="*", s=220, color=method_color("MASC"),
               edgecolor="black", zorder=3, label="self-stopped: forget ROUGE-L")
    ax.scatter([stopped_step], [stopped["model_utility"]], marker="*", s=220, color=method_color("Oracle"),
               edgecolor="black", zorder=3, label="self-stopped: model utility")
    ax.axhline(oracle["forget_Q_A_ROUGE"], color="grey", linewidth=0.8, linestyle=":", label="oracle forget ROUGE-L")
    ax.set_xlabel("optimizer steps")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, loc="center right")
    return fig


MUSE_PANELS = (("verbmem_f", "VerbMem forget"), ("knowmem_f", "KnowMem forget"), ("knowmem_r", "KnowMem retain"),
               ("privleak", "PrivLeak"))


def plot_muse_bars(results, corpora: Sequence[str], names: Sequence[str], panels=MUSE_PANELS):
    """MUSE's four numbers per model of `names`, a row of panels per corpus (`results`: a row per
    corpus and method); PrivLeak's panel marks 0, the ideal. Returns the figure."""
    fig, axs = plt.subplots(len(corpora), len(panels), figsize=(13, 3.2 * len(corpora)), squeeze=False)
    for row_axes, corpus in zip(axs, corpora):
        part = results[results.corpus == corpus].set_index("method").loc[list(names)]
        for ax, (key, title) in zip(row_axes, panels):
            ax.bar(range(len(names)), part[key], color=[method_color(n) for n in names])
            ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
            ax.set_title(f"{corpus}: {title}", fontsize=9)
            if key == "privleak":
                ax.axhline(0, color="black", linewidth=0.8)
    fig.tight_layout()
    return fig


SCALE_PANELS = (("forget_Q_A_ROUGE", "forget ROUGE-L"), ("forget_Q_A_Prob", "forget Prob"), ("model_utility", "model utility"))


def plot_against_size(results, panels=SCALE_PANELS):
    """Each metric of `panels` against the parameter count (log scale), a line per method of
    `results` (a row per size and method; the target and the oracle dashed). Returns the figure."""
    fig, axs = plt.subplots(1, len(panels), figsize=(12, 3.6), squeeze=False)
    for ax, (key, title) in zip(axs[0], panels):
        for name, part in results.groupby("method", sort=False):
            ax.plot(part.parameters, part[key], "--" if name in ("Target", "Oracle") else "-", marker="o",
                    color=method_color(name), label=name)
        ax.set_xscale("log")
        ax.set_xlabel("parameters")
        ax.set_title(title)
        ax.set_ylim(0, 1.02)
    axs[0][-1].legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_losses_by_rule(logs):
    """The SAGO paper's Fig. 1: retain loss and forget NLL (the negated gradient-ascent loss) at every
    step, a line per rule of `logs` (`alignment.logs_of`). Returns the figure."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    for rule, part in logs.groupby("rule", sort=False):
        left.plot(part.step, part.retain_loss, color=RULE_COLORS[rule], label=rule)
        right.plot(part.step, -part.forget_loss, color=RULE_COLORS[rule], label=rule)
    left.set_title("retain loss (NLL)")
    right.set_title("forget NLL (negated GA loss)")
    for ax in (left, right):
        ax.set_xlabel("step")
    left.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_module_conflicts(logs, rule: str, kinds: Sequence[str]):
    """The share of conflicting coordinates per kind of module (rows, `kinds`) and step (columns) of
    the run of `rule`. Returns the figure."""
    heat = logs[logs.rule == rule].set_index("step")[list(kinds)].T
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(kinds) + 1.2))
    image = ax.imshow(heat.values, aspect="auto", cmap="RdBu_r", vmin=0, vmax=1, interpolation="nearest")
    ax.set_yticks(range(len(kinds)), [k.removeprefix("conflict_") for k in kinds], fontsize=8)
    every = max(1, len(heat.columns) // 10)
    ax.set_xticks(range(0, len(heat.columns), every), heat.columns[::every])
    ax.set_xlabel("step")
    ax.grid(False)
    fig.colorbar(image, ax=ax, label="conflicting share")
    return fig


def plot_sago_against_pcgrad(both, conflict):
    """cos(g_final, g_r) of SAGO against module-wise PCGrad on the same gradients, a point per step
    (`alignment.same_gradients`), coloured by a global conflict; the diagonal is a tie. Returns the figure."""
    fig, ax = plt.subplots(figsize=(5, 4.6))
    ax.scatter(both.cos_retain_pcgrad[conflict], both.cos_retain_sago[conflict], s=10, color="#C84545",
               label="global conflict (cos(g_f, g_r) < 0)")
    ax.scatter(both.cos_retain_pcgrad[~conflict], both.cos_retain_sago[~conflict], s=10, color="#2F5D8A",
               label="no global conflict")
    ax.plot([-0.05, 1], [-0.05, 1], color="black", linewidth=1)
    ax.set_xlabel("cos(g_final, g_r), module-wise PCGrad")
    ax.set_ylabel("cos(g_final, g_r), SAGO")
    ax.legend(fontsize=8)
    return fig


def plot_wmdp_pareto(results, objectives: Sequence[str], target_mmlu: float, chance: float = 0.25):
    """The SAGO paper's Fig. 3 in miniature: per forget objective, WMDP accuracy against MMLU of every
    run of the retain-weight sweep (`plot_pareto`), the target's MMLU dashed and chance dotted.
    Returns the figure."""
    fig, axs = plt.subplots(1, len(objectives), figsize=(4.2 * len(objectives), 3.8), sharey=True, squeeze=False)
    for ax, objective in zip(axs[0], objectives):
        plot_pareto(ax, results[results.objective == objective], "forget", "mmlu_accuracy")
        ax.axhline(target_mmlu, color="black", linestyle="--", linewidth=0.8, label="target MMLU")
        ax.axhline(chance, color="grey", linestyle=":", linewidth=0.8)
        ax.axvline(chance, color="grey", linestyle=":", linewidth=0.8)
        ax.set_title(method_name(objective, "sago"))
        ax.set_xlabel("WMDP accuracy (forget, lower is better)")
    axs[0][0].set_ylabel("MMLU accuracy")
    axs[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def plot_variants(results, oracle: dict):
    """Forget ROUGE-L against model utility of every variant (`beyond.variant_results`), coloured by
    method, marked by synthesis rule (circle sum, triangle PCGrad, star SAGO), filled where the
    violation rule stopped it, sized by run time; the oracle as a grey cross."""
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for variant, row in results.iterrows():
        color = method_color(row["method"])
        ax.scatter(row["forget_Q_A_ROUGE"], row["model_utility"], s=40 + 25 * row["seconds"],
                   facecolors=color if row["stop"] == "violation" else "none", edgecolors=color, linewidth=1.5,
                   marker={"sum": "o", "pcgrad": "^", "sago": "*"}[row["rule"]])
        ax.annotate(variant, (row["forget_Q_A_ROUGE"], row["model_utility"]), fontsize=7, xytext=(4, 4),
                    textcoords="offset points")
    ax.scatter(oracle["forget_Q_A_ROUGE"], oracle["model_utility"], marker="x", s=80, color="grey")
    ax.set(xlabel="forget ROUGE-L (lower is better)", ylabel="model utility")
    return fig


def plot_trainer_geometry(history: Sequence[dict]):
    """A `Trainer`'s log history with `log_geometry` (`unlearning.hf`): per step, cos(g_f, g_r) (the
    conflict the rule resolves) and cos(g_final, g_r) (the rule's guarantee: never below 0), and the
    share of conflicting coordinates. Returns the figure."""
    rows = [h for h in history if "cos_final_retain" in h]
    steps = [h["step"] for h in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.4))
    left.plot(steps, [h["cos_forget_retain"] for h in rows], marker="o", markersize=3, label="cos(g_f, g_r)")
    left.plot(steps, [h["cos_final_retain"] for h in rows], marker="o", markersize=3, label="cos(g_final, g_r)")
    left.axhline(0, color="black", linewidth=0.8)
    left.set_ylim(-1.02, 1.02)
    left.set_title("the update against the retain gradient")
    left.legend(fontsize=8)
    right.plot(steps, [h["conflict_coordinates"] for h in rows], marker="o", markersize=3, color="#7B4FA0")
    right.set_ylim(0, 1)
    right.set_title("coordinates whose signs conflict")
    for ax in (left, right):
        ax.set_xlabel("optimizer step")
    fig.tight_layout()
    return fig
