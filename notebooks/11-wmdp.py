# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # WMDP-mini: retention first
#
# **The claim** (SAGO paper {cite}`xiao2026sago`, main table and Fig. 3; WMDP {cite}`li2024wmdp`): adding a retain term to a forget objective is not
# enough, since GA+GD, NPO+GD and SimNPO+GD all lose much of the model's general ability (MMLU) while
# driving hazardous-knowledge accuracy (WMDP) to chance. Combining the forget and retain gradients so
# that the update never opposes retention (one-sided PCGrad per module, or SAGO's per-coordinate sign
# gate) keeps far more utility at the same forgetting: SimNPO+GD recovers 44.6 % of the target's
# MMLU naively, 94 % with PCGrad and 96 % with SAGO. Finer granularity helps: global PCGrad <
# module-wise PCGrad < SAGO (element-wise).
#
# Here the WMDP-mini target is the pretrained base model (it learned the hazard domain from the
# world corpus, as Zephyr did from the web). As in the paper, bio and cyber are unlearned apart: the
# bio runs forget the bio forget corpus and retain the bio retain corpus, the cyber runs likewise,
# and each is scored by its own four-choice accuracy (lower is better, chance 25 %) and by the
# MMLU-like set (higher is better). **Recovery** = MMLU after / MMLU of the target, in percent.
# **Every run is the SAGO paper's own** (the recipes `sago/wmdp-bio` and `sago/wmdp-cyber`, printed
# below with the official file of every value): its rate, step budget and weights per objective and
# rule, AdamW without weight decay, a 10 % warm-up then linear decay, clipping at 1.0, and the corpora
# packed into blocks as SAGO's `PretrainingDataset` packs them, scaled to the laboratory by the rule
# printed with the table.

# %% tags=["parameters"]
profile = "mini"
size = "s"
splits = ["bio", "cyber"]          # each unlearned apart, with its own recipe
retain_weights = [0.1, 0.3, 1.0]   # alpha sweep for the Pareto fronts (first split; gamma: the recipe's)
sweep_rules = ["sum", "pcgrad", "sago"]
objectives = ["GradDiff", "NPO+GD", "SimNPO+GD"]   # GA+GD, NPO+GD, SimNPO+GD
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("11-wmdp", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning import recipes
from unlearning.metrics.choice import recovery_percent
from unlearning.benchmarks.wmdp import FOUR_CHOICE_CHANCE
from unlearning.claims import record
from unlearning.floors import mark, near_level
from unlearning.methods import method_name
from unlearning.plotting import plot_pareto, use_book_style
from unlearning import verdicts
from unlearning.protocol import Lab, sago_grid

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
base = f"base-{size}"
target = lab.evaluate("wmdp", lab.model(base))


def corpora(split: str) -> dict:
    return {"recipe": f"sago/wmdp-{split}", "forget_split": f"{split}-forget-corpus",
            "retain_split": f"{split}-retain-corpus"}


def grid(split: str, **options) -> pd.DataFrame:
    """The split's runs with their metrics; `forget` is the split's own WMDP accuracy."""
    frame = pd.DataFrame(sago_grid(lab, "wmdp", base, objectives, **corpora(split), **options)).drop(columns="run")
    frame.insert(0, "split", split)
    frame["forget"] = frame[f"wmdp-{split}_accuracy"]
    frame["recovery %"] = [recovery_percent(m, target["mmlu_accuracy"]) for m in frame["mmlu_accuracy"]]
    return frame


main = pd.concat([grid(split) for split in splits], ignore_index=True)
sweep = grid(splits[0], rules=sweep_rules, retain_weights=retain_weights)
results = pd.concat([main[main.split == splits[0]], sweep[sweep.variant != "forget-only"]], ignore_index=True)

# %% [markdown]
# ## The recipes of this page
#
# One table per split: every run as the SAGO paper's configuration sets it (`paper lr`, `paper
# batch`) and as this page runs it, with the file each value comes from.

# %% tags=["hide-input"]
for split in splits:
    recipes.show(lab, f"sago/wmdp-{split}", sorted(set(main[main.split == split].recipe.str.split(" ").str[0])), base,
                 benchmark="wmdp", forget_split=f"{split}-forget-corpus")

# %% [markdown]
# ## The main table
#
# Each objective with its recipe's weights: forget-only, with the GD retain term combined by plain
# summation, and with global PCGrad, module-wise PCGrad and SAGO; bio and cyber runs apart.

# %% tags=["hide-input"]
columns = {"forget": "WMDP (own split)", "mmlu_accuracy": "MMLU", "recovery %": "recovery %", "alpha": "alpha"}
table = main.set_index(["split", "objective", "variant"])[list(columns)].rename(columns=columns)
display(Markdown(f"Target (base-{size}): WMDP-Bio {target['wmdp-bio_accuracy']:.3f}, WMDP-Cyber "
                 f"{target['wmdp-cyber_accuracy']:.3f}, MMLU {target['mmlu_accuracy']:.3f}."))
# a four-choice accuracy the target already answers at chance cannot drop (nothing to unlearn)
# each question set's size: an accuracy within its 95 % sampling interval of chance carries no signal
questions = {s: lab.forget_size("wmdp", s) for s in ("wmdp-bio", "wmdp-cyber", "mmlu")}
flat = {}
for column in ("wmdp-bio_accuracy", "wmdp-cyber_accuracy", "mmlu_accuracy"):
    width = verdicts.accuracy_resolution(target[column], questions[column.replace("_accuracy", "")], paired=False)
    flat.update(near_level(target[column], FOUR_CHOICE_CHANCE, column, column.replace("_accuracy", "").replace("wmdp", "WMDP"),
                           "chance, 1/4", tolerance=width))
flat_columns = {"mmlu_accuracy": "MMLU"} | ({"forget": "WMDP (own split)"} if all(
    f"wmdp-{split}_accuracy" in flat for split in splits) else {})
table, note = mark(table, {k: v for k, v in flat.items() if k in flat_columns}, flat_columns,
                   elsewhere="Knowledge with signal, on a real pretrained model: {doc}`14-tofu-real`.")
display(Markdown(note + " ".join(f" {v}" for k, v in flat.items() if k not in flat_columns)))
table.round(3)

# %% [markdown]
# ## Pareto fronts over the retain weight
#
# Every run of the sweep on the first split: its WMDP accuracy (lower is better) against MMLU
# (higher is better), the retain weight alpha swept around the recipe's. Marker shapes follow the SAGO paper's Fig. 3: circle forget-only, square +GD,
# triangle +GD+PCGrad, star +GD+SAGO; the line joins each rule's non-dominated runs.

# %% mystnb={"figure": {"caption": "WMDP-mini Pareto fronts, one panel per forget objective: the first split's WMDP accuracy against MMLU accuracy for every retain weight alpha under plain summation (+GD), module-wise PCGrad and SAGO. The dashed line is the target's MMLU and the dotted line chance.", "name": "fig-wmdp-pareto"}} tags=["hide-input"]
fig, axs = plt.subplots(1, len(objectives), figsize=(4.2 * len(objectives), 3.8), sharey=True, squeeze=False)
axs = axs[0]
for ax, objective in zip(axs, objectives):
    plot_pareto(ax, results[results.objective == objective], "forget", "mmlu_accuracy")
    ax.axhline(target["mmlu_accuracy"], color="black", linestyle="--", linewidth=0.8, label="target MMLU")
    ax.axhline(FOUR_CHOICE_CHANCE, color="grey", linestyle=":", linewidth=0.8)
    ax.axvline(FOUR_CHOICE_CHANCE, color="grey", linestyle=":", linewidth=0.8)
    ax.set_title(method_name(objective, "sago"))
    ax.set_xlabel("WMDP accuracy (forget, lower is better)")
axs[0].set_ylabel("MMLU accuracy")
axs[-1].legend(fontsize=7, loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Granularity: global, per module, per coordinate
#
# The SAGO paper's ablation (GA+GD on WMDP Bio: global PCGrad 51.0, module-wise 53.0, SAGO 54.1
# MMLU). The same comparison here, for every objective and split at its recipe's settings (where SAGO
# releases no global PCGrad configuration for an objective, its module-wise PCGrad settings run with
# the global rule; the recipe column of the table above says so).

# %% tags=["hide-input"]
gran = main[main.rule.isin(["sum", "pcgrad_global", "pcgrad", "sago"])]
pivot = gran.pivot_table(index=["split", "objective"], columns="rule", values="mmlu_accuracy")
pivot = pivot[["sum", "pcgrad_global", "pcgrad", "sago"]]
pivot.round(3)


# %% [markdown]
# (verdict-wmdp)=
# ## Did the claims hold?

# %% tags=["hide-input"]
cases = [(split, o) for split in splits for o in objectives]


def verdict(split: str, objective: str) -> str:
    part = main[(main.split == split) & (main.objective == objective)].set_index("rule")
    naive, pc, sago = part.loc["sum"], part.loc["pcgrad"], part.loc["sago"]
    return (f"{split} {method_name(objective, 'sago')}: recovery {naive['recovery %']:.0f} % (+GD) → "
            f"{pc['recovery %']:.0f} % (PCGrad) → {sago['recovery %']:.0f} % (SAGO) at forget accuracy "
            f"{naive['forget']:.2f} / {pc['forget']:.2f} / {sago['forget']:.2f}")


def rows(split: str, objective: str) -> pd.DataFrame:
    part = main[(main.split == split) & (main.objective == objective)].set_index("rule")
    return part.rename(columns={"mmlu_accuracy": "utility"})


def resolutions(split: str) -> tuple[float, float]:
    """The 95 % sampling interval of a difference of two models' accuracies on the forget split and on MMLU."""
    return (verdicts.accuracy_resolution(target[f"wmdp-{split}_accuracy"], questions[f"wmdp-{split}"]),
            verdicts.accuracy_resolution(target["mmlu_accuracy"], questions["mmlu"]))


recovery = {}
for split, objective in cases:
    part = rows(split, objective)
    no_signal = (verdicts.knowledge_to_remove(target[f"wmdp-{split}_accuracy"], FOUR_CHOICE_CHANCE, questions[f"wmdp-{split}"])
                 or flat.get("mmlu_accuracy", ""))
    recovery[split, objective] = verdicts.utility_recovered(
        part.loc["sum"], {r: part.loc[r] for r in ("pcgrad", "sago")}, *resolutions(split), no_signal=no_signal)
granularity = {}
for split, objective in pivot.index:
    part = rows(split, objective)
    order = ["pcgrad_global", "pcgrad", "sago"]
    granularity[split, objective] = verdicts.ordered_by_granularity(
        [part.loc[r, "utility"] for r in order], [part.loc[r, "forget"] for r in order], *resolutions(split))
label = {case: f"{case[0]} {method_name(case[1], 'sago')}" for case in [*cases, *pivot.index]}
display(Markdown(
    "**Did the claims hold in miniature?** " + "; ".join(
        f"{verdict(*case)}: {recovery[case].verdict}" + (f" ({recovery[case].reason})" if recovery[case].reason else "")
        for case in cases) + ". Retention from global PCGrad to module-wise PCGrad to SAGO: " + "; ".join(
        f"{label[case]} {v.verdict}" + (f" ({v.reason})" if v.reason else "") for case, v in granularity.items()) + ". "
    "Differences are read against the 95 % sampling interval of two accuracies on the same questions ("
    + ", ".join(f"{split}: forget {resolutions(split)[0]:.3f}, MMLU {resolutions(split)[1]:.3f}" for split in splits)
    + "); a recovery only counts where forgetting is no weaker than +GD's by more than that."))
display(Markdown("\n\n".join([
    record("sago-wmdp-recovery", "; ".join(verdict(*case) for case in cases),
           verdicts.combine([recovery[c] for c in cases], [label[c] for c in cases]), profile),
    record("sago-granularity", "MMLU " + "; ".join(
        f"{label[split, o]} {' / '.join(f'{pivot.loc[(split, o), r]:.3f}' for r in ('pcgrad_global', 'pcgrad', 'sago'))}"
        for split, o in pivot.index),
        verdicts.combine(list(granularity.values()), [label[c] for c in granularity]), profile)])))
