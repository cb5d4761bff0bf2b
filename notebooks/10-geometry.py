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
# # Gradient geometry
#
# PCGrad {cite}`yu2020pcgrad` and SAGO {cite}`xiao2026sago` change the update, not the losses. This chapter looks at the gradients
# themselves during the WMDP-mini bio runs of {doc}`11-wmdp` (GA+GD, i.e. `GradDiff`, each rule with its
# settings of the SAGO paper's recipe `sago/wmdp-bio`; the same runs are read back from the run
# store), logged at every step:
#
# - **Forget-Retain** $\cos(g_f, g_r)$: how much the two tasks conflict;
# - **Comb-Retain** $\cos(g_{final}, g_r)$ and **Comb-Forget** $\cos(g_{final}, g_f)$: where the update goes;
# - the share of conflicting *coordinates* ($g_{f,i} g_{r,i} < 0$) and of conflicting *modules*
#   ($\langle g_f^j, g_r^j \rangle < 0$), overall and per kind of module.
#
# **The claims** (SAGO paper, geometry table and section 5): both rules keep $\langle g_{final}, g_r
# \rangle \ge 0$; SAGO "aligns more tightly" with retention than PCGrad. The second is not true for
# arbitrary vectors (`sago.md` §5 gives counterexamples); we test it on the gradients that training
# actually produces, comparing both rules on the *same* $(g_f, g_r)$ at every step.

# %% tags=["parameters"]
profile = "mini"
size = "s"
objective = "GradDiff"
rules = ["sum", "pcgrad_global", "pcgrad", "sago"]
optimizers = ["adamw", "sgd"]  # the step actually taken, under the recipe's AdamW and under plain SGD
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("10-geometry", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
import torch
from IPython.display import Markdown, display

from unlearning import verdicts
from unlearning.claims import record
from unlearning.plotting import RULE_COLORS, use_book_style
from unlearning.protocol import Lab, sago_run_name
from unlearning.recipes import load as load_recipe
from unlearning.synthesis import combine

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
recipe = load_recipe("sago/wmdp-bio")
bio = dict(benchmark="wmdp", forget_split="bio-forget-corpus", retain_split="bio-retain-corpus")
runs = {rule: lab.recipe_run(recipe, sago_run_name(recipe, objective, rule)[0], f"base-{size}", rule=rule,
                             record_geometry=True, **bio) for rule in rules}
logs = pd.concat([pd.DataFrame(run["log"]).assign(rule=rule) for rule, run in runs.items()], ignore_index=True)

# %% [markdown]
# The runs, as the SAGO paper's WMDP-Bio configurations set them (each rule its own rate, budget and
# weights; where no global-PCGrad configuration is released for an objective, its module-wise
# PCGrad settings run with the global rule):

# %% tags=["hide-input"]
from unlearning import recipes

recipes.show(lab, recipe, list(dict.fromkeys(sago_run_name(recipe, objective, rule)[0] for rule in rules)),
             f"base-{size}", benchmark="wmdp", forget_split="bio-forget-corpus")

# %% [markdown]
# ## Losses along training (the SAGO paper's Fig. 1)

# %% mystnb={"figure": {"caption": "Retain loss (left, lower is better) and forget loss (right; under gradient ascent the forget NLL, which rises) at every step of GA+GD on WMDP-mini under each update rule.", "name": "fig-geometry-losses"}} tags=["hide-input"]
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
plt.show()

# %% [markdown]
# ## Cosines, averaged over training (the SAGO paper's geometry table)

# %% tags=["hide-input"]
columns = {"cos_forget_retain": "Forget-Retain", "cos_final_retain": "Comb-Retain", "cos_final_forget": "Comb-Forget",
           "conflict_coordinates": "conflicting coordinates", "conflict_modules": "conflicting modules"}
logs.groupby("rule", sort=False)[list(columns)].mean().rename(columns=columns).round(3)

# %% [markdown]
# ## Where the conflict lives
#
# Share of conflicting coordinates per kind of module over training (plain summation run). Exact
# zeros do not count as conflicts. The embedding matrix is tied to the output layer, so every row
# receives a gradient through the softmax; under gradient ascent the forget gradient is the negated
# likelihood gradient, and on the directions shared by all text the two tasks oppose each other.

# %% mystnb={"figure": {"caption": "Share of coordinates where the forget and retain gradients have opposite signs, per kind of module (rows) and training step (columns), GA+GD with plain summation on WMDP-mini. 0.5 would be unrelated gradients.", "name": "fig-geometry-modules"}} tags=["hide-input"]
kinds = sorted(c for c in logs.columns if c.startswith("conflict_") and c not in ("conflict_coordinates", "conflict_modules"))
heat = logs[logs.rule == rules[0]].set_index("step")[kinds].T
fig, ax = plt.subplots(figsize=(10, 0.35 * len(kinds) + 1.2))
image = ax.imshow(heat.values, aspect="auto", cmap="RdBu_r", vmin=0, vmax=1, interpolation="nearest")
ax.set_yticks(range(len(kinds)), [k.removeprefix("conflict_") for k in kinds], fontsize=8)
every = max(1, len(heat.columns) // 10)
ax.set_xticks(range(0, len(heat.columns), every), heat.columns[::every])
ax.set_xlabel("step")
ax.grid(False)
fig.colorbar(image, ax=ax, label="conflicting share")
plt.show()

# %% [markdown]
# ## Does SAGO align more tightly than PCGrad?
#
# At every logged step of every run, all four rules were applied to the *same* pair $(g_f, g_r)$ and
# their cosine with $g_r$ recorded (`cos_retain_<rule>`). Each point below is one step; above the
# diagonal SAGO is better aligned with retention than module-wise PCGrad.

# %% mystnb={"figure": {"caption": "cos(g_final, g_r) of SAGO against module-wise PCGrad on the same gradients, every step of every run; colour: whether g_f and g_r conflict globally at that step.", "name": "fig-geometry-test"}} tags=["hide-input"]
both = logs.dropna(subset=["cos_retain_sago", "cos_retain_pcgrad"])
conflict = both.cos_forget_retain < 0
fig, ax = plt.subplots(figsize=(5, 4.6))
ax.scatter(both.cos_retain_pcgrad[conflict], both.cos_retain_sago[conflict], s=10, color="#C84545",
           label="global conflict (cos(g_f, g_r) < 0)")
ax.scatter(both.cos_retain_pcgrad[~conflict], both.cos_retain_sago[~conflict], s=10, color="#2F5D8A",
           label="no global conflict")
ax.plot([-0.05, 1], [-0.05, 1], color="black", linewidth=1)
ax.set_xlabel("cos(g_final, g_r), module-wise PCGrad")
ax.set_ylabel("cos(g_final, g_r), SAGO")
ax.legend(fontsize=8)
plt.show()

# %% tags=["hide-input"]
test = pd.DataFrame({
    "steps": [int(conflict.sum()), int((~conflict).sum())],
    "SAGO better aligned": [int((both.cos_retain_sago > both.cos_retain_pcgrad)[conflict].sum()),
                            int((both.cos_retain_sago > both.cos_retain_pcgrad)[~conflict].sum())],
    "min cos(final, g_r), PCGrad": [both.cos_retain_pcgrad[conflict].min(), both.cos_retain_pcgrad[~conflict].min()],
    "min cos(final, g_r), SAGO": [both.cos_retain_sago[conflict].min(), both.cos_retain_sago[~conflict].min()],
}, index=["global conflict", "no global conflict"])
test.round(3)


# %% [markdown]
# ### Two vectors where it fails
#
# The counterexamples of `sago.md` §5, computed with the library's own `combine` ($\alpha = \gamma = 1$,
# one module): with a global conflict PCGrad can align better, and without one SAGO drops $g_r$ on
# every aligned coordinate and keeps only $g_f$.

# %%
def cosine(a, b):
    return float(torch.dot(a, b) / (a.norm() * b.norm()))


examples = {"conflicting: g_r=(4,3), g_f=(1,-2)": ((4.0, 3.0), (1.0, -2.0)),
            "aligned: g_r=(1,0.1), g_f=(0.1,1)": ((1.0, 0.1), (0.1, 1.0))}
rows = []
for label, (g_r, g_f) in examples.items():
    g_r, g_f = torch.tensor(g_r), torch.tensor(g_f)
    row = {"example": label}
    for rule in ("pcgrad", "sago"):
        final = combine([g_f], [g_r], rule)[0]
        row[f"{rule} update"] = tuple(round(float(v), 2) for v in final)
        row[f"cos with g_r, {rule}"] = round(cosine(final, g_r), 3)
    rows.append(row)
pd.DataFrame(rows).set_index("example")

# %% [markdown]
# ## Does the step the optimiser takes oppose retention?
#
# The guarantee is about the combined gradient $g_{final}$, but the parameters move by what the
# optimiser makes of it. Under plain SGD the step is $-\eta\, g_{final}$ (plus weight decay), so it
# keeps the guarantee. Under AdamW every coordinate is divided by its own running second moment, and
# on the first step the update is about $-\eta\,\mathrm{sign}(g_{final})$: SAGO's combined vector carries
# $g_r$'s sign on every coordinate, so its first AdamW step is, coordinate by coordinate, the
# retain-only step, whatever $g_f$ says. Each run below logged, at every step, the cosine of the actual
# parameter change with $-g_r$ (positive: the step descends the retain loss) and with $-g_f$ (positive:
# it descends the forget objective). Same recipe, same gradients at the start; only the optimiser
# differs (SGD at the recipe's rate, which moves the weights little: the direction is the question).

# %% tags=["hide-input"]
from dataclasses import replace


def geometry_run(rule: str, optimizer: str) -> dict:
    """The chapter's run of `rule` (its recipe, geometry logged) under `optimizer`."""
    name = sago_run_name(recipe, objective, rule)[0]
    spec = lab.recipe_spec(recipe, name, f"base-{size}", rule=rule, record_geometry=True, **bio)
    return lab.run_spec(replace(spec, optim=replace(spec.optim, optimizer=optimizer)), f"base-{size}")


steps_taken = pd.concat([pd.DataFrame(geometry_run(rule, optimizer)["log"]).assign(rule=rule, optimizer=optimizer)
                         for optimizer in optimizers for rule in rules], ignore_index=True)
update_table = steps_taken.groupby(["optimizer", "rule"], sort=False).agg(
    **{"mean cos(step, -g_r)": ("cos_update_retain", "mean"), "min cos(step, -g_r)": ("cos_update_retain", "min"),
       "steps opposing retention": ("cos_update_retain", lambda c: int((c < 0).sum())),
       "mean cos(step, -g_f)": ("cos_update_forget", "mean"), "steps": ("step", "count")})
update_table.round(3)

# %% tags=["hide-input"]
opposing = update_table["steps opposing retention"]
display(Markdown(
    "Steps that opposed retention (cos(step, -g_r) < 0): " + "; ".join(
        f"{o}: " + ", ".join(f"{r} {int(opposing[o, r])} of {int(update_table.loc[(o, r), 'steps'])}"
                             for r in rules if (o, r) in opposing.index) for o in optimizers) + ". "
    "Under SGD PCGrad's and SAGO's steps inherit the guarantee of their combined gradients; under AdamW a "
    "step is what the per-coordinate scaling makes of them. " + "".join(
        f"Under {o}, SAGO's steps descend the forget objective {'less' if f['sago'] < f['pcgrad'] else 'more'} than "
        f"module-wise PCGrad's (mean cos(step, -g_f) {f['sago']:.3f} against {f['pcgrad']:.3f}) and retention "
        f"{'more' if r['sago'] > r['pcgrad'] else 'less'} ({r['sago']:.3f} against {r['pcgrad']:.3f}). "
        for o in optimizers if {(o, "sago"), (o, "pcgrad")} <= set(update_table.index)
        for f, r in [(update_table.loc[o, "mean cos(step, -g_f)"], update_table.loc[o, "mean cos(step, -g_r)"])])
    + "A rule whose steps lean to retention forgets less per step at the same budget, which bears on the "
    "short-budget comparisons of {doc}`11-wmdp` and {doc}`12-rwku`."))

# %% [markdown]
# (verdict-geometry)=
# ## Did the claims hold?

# %% tags=["hide-input"]
mean_cos = logs.groupby("rule")["cos_final_retain"].mean()
nonneg = {rule: float(logs[logs.rule == rule]["cos_final_retain"].min()) for rule in rules if rule != "sum"}
share = float((both.cos_retain_sago > both.cos_retain_pcgrad).mean())
display(Markdown(
    f"**What held.** The guarantee: the smallest cos(g_final, g_r) over all steps is "
    f"{', '.join(f'{r} {v:.3f}' for r, v in nonneg.items())} (never negative, as the invariants require; "
    f"plain summation reaches {float(logs[logs.rule == 'sum']['cos_final_retain'].min()):.3f}). "
    f"Mean Comb-Retain: {', '.join(f'{r} {mean_cos[r]:.2f}' for r in rules)}. "
    f"On identical gradients SAGO was better aligned than module-wise PCGrad at {share:.0%} of the steps "
    f"({int((both.cos_retain_sago > both.cos_retain_pcgrad)[conflict].sum())} of {int(conflict.sum())} with a global conflict, "
    f"{int((both.cos_retain_sago > both.cos_retain_pcgrad)[~conflict].sum())} of {int((~conflict).sum())} without): "
    f"'SAGO aligns more tightly' is {'true at every step here' if share == 1 else 'a tendency, not a theorem'}, "
    f"and the two small vectors above show how it fails."))
display(Markdown("\n\n".join([
    record("sago-never-opposes", "smallest cos(g_final, g_r) over all steps: " + ", ".join(f"{r} {v:.3f}" for r, v in nonneg.items()),
           verdicts.construction_check(nonneg), profile),
    record("sago-tighter", f"SAGO better aligned than module-wise PCGrad at {share:.0%} of the steps "
           f"(mean Comb-Retain {', '.join(f'{r} {mean_cos[r]:.2f}' for r in ('pcgrad', 'sago') if r in mean_cos)})",
           verdicts.more_often(int((both.cos_retain_sago > both.cos_retain_pcgrad).sum()), len(both)), profile)])))
