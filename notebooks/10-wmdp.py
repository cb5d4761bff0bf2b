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
# world corpus, as Zephyr did from the web); forget and retain corpora are WMDP-mini's bio and cyber
# corpora, and the metrics are four-choice accuracies by option log-likelihood on wmdp-bio,
# wmdp-cyber (lower is better, chance 25 %) and the MMLU-like set (higher is better).
# **Recovery** = MMLU after / MMLU of the target, in percent. Every run follows
# `unlearning.protocol.SAGO_PROTOCOL` (its values are printed below) with the objectives' default
# weights (alpha = gamma = 1, except SimNPO+GD's forget weight 0.125).

# %% tags=["parameters"]
profile = "mini"
size = "s"
retain_weights = [0.1, 0.3, 1.0]   # alpha sweep for the Pareto fronts (gamma: the method default)
sweep_rules = ["sum", "pcgrad", "sago"]
objectives = ["GradDiff", "NPO+GD", "SimNPO+GD"]   # GA+GD, NPO+GD, SimNPO+GD
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("10-wmdp", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.metrics.choice import recovery_percent
from unlearning.claims import CANNOT_TELL, record, tally
from unlearning.floors import mark, near_level
from unlearning.plotting import plot_pareto, use_book_style
from unlearning.protocol import SAGO_PROTOCOL, Lab, sago_grid

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
display(Markdown(f"Protocol of this page: {SAGO_PROTOCOL.describe()}."))
base = f"base-{size}"
target = lab.evaluate("wmdp", lab.model(base))
rows = sago_grid(lab, "wmdp", base, objectives)
rows += [r for r in sago_grid(lab, "wmdp", base, objectives, rules=sweep_rules, retain_weights=retain_weights)
         if r["variant"] != "forget-only"]
results = pd.DataFrame(rows).drop(columns="run")
results["forget_accuracy"] = (results["wmdp-bio_accuracy"] + results["wmdp-cyber_accuracy"]) / 2
results["recovery %"] = [recovery_percent(m, target["mmlu_accuracy"]) for m in results["mmlu_accuracy"]]

# %% [markdown]
# ## The main table
#
# Each objective with its default weights: forget-only, with the GD retain term combined by plain
# summation, and with global PCGrad, module-wise PCGrad and SAGO.

# %% tags=["hide-input"]
main = pd.DataFrame(sago_grid(lab, "wmdp", base, objectives)).drop(columns="run")
main["recovery %"] = [recovery_percent(m, target["mmlu_accuracy"]) for m in main["mmlu_accuracy"]]
columns = {"wmdp-bio_accuracy": "WMDP-Bio", "wmdp-cyber_accuracy": "WMDP-Cyber", "mmlu_accuracy": "MMLU",
           "recovery %": "recovery %", "alpha": "alpha"}
table = main.set_index(["objective", "variant"])[list(columns)].rename(columns=columns)
display(Markdown(f"Target (base-{size}): WMDP-Bio {target['wmdp-bio_accuracy']:.3f}, WMDP-Cyber "
                 f"{target['wmdp-cyber_accuracy']:.3f}, MMLU {target['mmlu_accuracy']:.3f}."))
# a four-choice accuracy the target already answers at chance cannot drop (nothing to unlearn)
flat = {}
for column in ("wmdp-bio_accuracy", "wmdp-cyber_accuracy", "mmlu_accuracy"):
    flat.update(near_level(target[column], 0.25, column, columns[column], "chance, 1/4"))
table, note = mark(table, flat, columns, elsewhere="Knowledge with signal, on a real pretrained model: "
                   "{doc}`14-tofu-real`.")
display(Markdown(note))
table.round(3)

# %% [markdown]
# ## Pareto fronts over the retain weight
#
# Every run of the sweep: WMDP accuracy (mean of bio and cyber, lower is better) against MMLU
# (higher is better). Marker shapes follow the SAGO paper's Fig. 3: circle forget-only, square +GD,
# triangle +GD+PCGrad, star +GD+SAGO; the line joins each rule's non-dominated runs.

# %% mystnb={"figure": {"caption": "WMDP-mini Pareto fronts, one panel per forget objective: forget accuracy (mean of WMDP-Bio and WMDP-Cyber) against MMLU accuracy for every retain weight alpha under plain summation (+GD), module-wise PCGrad and SAGO. The dashed line is the target's MMLU and the dotted line chance.", "name": "fig-wmdp-pareto"}} tags=["hide-input"]
fig, axs = plt.subplots(1, len(objectives), figsize=(4.2 * len(objectives), 3.8), sharey=True, squeeze=False)
axs = axs[0]
for ax, objective in zip(axs, objectives):
    plot_pareto(ax, results[results.objective == objective], "forget_accuracy", "mmlu_accuracy")
    ax.axhline(target["mmlu_accuracy"], color="black", linestyle="--", linewidth=0.8, label="target MMLU")
    ax.axhline(0.25, color="grey", linestyle=":", linewidth=0.8)
    ax.axvline(0.25, color="grey", linestyle=":", linewidth=0.8)
    ax.set_title(objective.replace("GradDiff", "GA+GD"))
    ax.set_xlabel("WMDP accuracy (forget, lower is better)")
axs[0].set_ylabel("MMLU accuracy")
axs[-1].legend(fontsize=7, loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Granularity: global, per module, per coordinate
#
# The SAGO paper's ablation (GA+GD on WMDP Bio: global PCGrad 51.0, module-wise 53.0, SAGO 54.1
# MMLU). The same comparison here, for every objective at its default weights.

# %% tags=["hide-input"]
gran = main[main.rule.isin(["sum", "pcgrad_global", "pcgrad", "sago"])]
gran.pivot_table(index="objective", columns="rule", values="mmlu_accuracy")[["sum", "pcgrad_global", "pcgrad", "sago"]].round(3)


# %% [markdown]
# (verdict-wmdp)=
# ## Did the claims hold?

# %% tags=["hide-input"]
def verdict(objective: str) -> str:
    part = main[main.objective == objective].set_index("rule")
    naive, pc, sago = part.loc["sum"], part.loc["pcgrad"], part.loc["sago"]
    return (f"{objective.replace('GradDiff', 'GA+GD')}: recovery {naive['recovery %']:.0f} % (+GD) → "
            f"{pc['recovery %']:.0f} % (PCGrad) → {sago['recovery %']:.0f} % (SAGO) at forget accuracy "
            f"{(naive['wmdp-bio_accuracy'] + naive['wmdp-cyber_accuracy']) / 2:.2f} / "
            f"{(pc['wmdp-bio_accuracy'] + pc['wmdp-cyber_accuracy']) / 2:.2f} / "
            f"{(sago['wmdp-bio_accuracy'] + sago['wmdp-cyber_accuracy']) / 2:.2f}")


pivot = gran.pivot_table(index="objective", columns="rule", values="mmlu_accuracy")
ordered = int(((pivot["pcgrad_global"] <= pivot["pcgrad"]) & (pivot["pcgrad"] <= pivot["sago"])).sum())
display(Markdown(
    "**Did the claim hold in miniature?** " + "; ".join(verdict(o) for o in objectives) + ". "
    f"Retention rose monotonically from global PCGrad to module-wise PCGrad to SAGO for {ordered} of "
    f"{len(pivot)} objectives. A higher recovery only counts at comparable forgetting; the Pareto panels "
    "show whether a rule moved the whole front or only traded forgetting for utility." + (
        f" The target is only {target['wmdp-bio_accuracy'] - 0.25:.2f} above chance on WMDP-Bio, so every method's "
        "forgetting is small and differences of one or two questions are noise." if target["wmdp-bio_accuracy"] < 0.45 else "")))


def forget_accuracy(row) -> float:
    return (row["wmdp-bio_accuracy"] + row["wmdp-cyber_accuracy"]) / 2


def recovered(objective: str) -> bool:
    """Both PCGrad and SAGO keep more MMLU than +GD, with forget accuracy at most 0.05 above its."""
    part = main[main.objective == objective].set_index("rule")
    return all(part.loc[r, "recovery %"] > part.loc["sum", "recovery %"]
               and forget_accuracy(part.loc[r]) <= forget_accuracy(part.loc["sum"]) + 0.05 for r in ("pcgrad", "sago"))


noise = (f"the target is only {target['wmdp-bio_accuracy'] - 0.25:.2f} above chance on WMDP-Bio, so forgetting "
         "differences are one or two questions" if target["wmdp-bio_accuracy"] < 0.45 else "")
mmlu_floor = flat.get("mmlu_accuracy", "")
display(Markdown("\n\n".join([
    record("sago-wmdp-recovery", "; ".join(verdict(o) for o in objectives),
           CANNOT_TELL if noise or mmlu_floor else tally(sum(recovered(o) for o in objectives), len(objectives)),
           profile, reason="; ".join(r for r in (noise, mmlu_floor) if r)),
    record("sago-granularity", "MMLU " + "; ".join(
        f"{o.replace('GradDiff', 'GA+GD')} {' / '.join(f'{pivot.loc[o, r]:.3f}' for r in ('pcgrad_global', 'pcgrad', 'sago'))}"
        for o in pivot.index), CANNOT_TELL if mmlu_floor else tally(ordered, len(pivot)), profile, reason=mmlu_floor)])))
