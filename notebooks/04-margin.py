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
# # The restricted margin
#
# MASC does not push the forget answers' likelihood down without limit, as gradient ascent does. At
# every forget position $t$ with gold token $y_t$ it compares the gold logit with the model's own
# strongest alternatives, the top-$k$ tokens $S_t$ other than $y_t$:
#
# $$m_t = \beta z_{y_t} - \log \sum_{j \in S_t} e^{\beta z_j}, \qquad \tau = \operatorname{logit}(\rho).$$
#
# With $\beta = 1$, $\sigma(m_t)$ is the gold token's probability renormalised over $\{y_t\} \cup S_t$,
# so $m_t \le \tau$ reads "the gold token keeps at most $\rho$ of that mass". A position with
# $m_t > \tau$ *violates*; MASC's buffered hinge pushes only on violating positions and stops
# pushing once they are gone. This chapter looks at the margin itself: how it separates a model that
# learned the forget set from one that never saw it, how $k$, $\beta$ and $\rho$ move the line, and
# what Proposition 1 promises about exact reproduction once few positions violate.

# %% tags=["parameters"]
profile = "mini"          # data/<profile>, models/<profile>, runs/<profile>
size = "s"                # model size of the target and oracle
forget_split = "forget10"
ks = [1, 3, 10, 30, 100]  # competitor-set sizes
betas = [0.5, 1.0, 2.0]   # inverse temperatures
rhos = [0.5, 0.6, 0.7, 0.8, 0.9]
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("04-margin", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt

from unlearning.data import collate
from unlearning.margin import tau_from_rho, violation_rate
from unlearning.methods import MASC_DEFAULTS
from experiments.tables import proposition1_summary, proposition1_table, violation_grid
from experiments.memorization import sequence_margins
from unlearning.models import load_model
from experiments.plotting import plot_margin_histograms, plot_proposition1, plot_violation_knobs, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab, tofu_oracle, tofu_target

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
forget, pad = lab.examples("tofu", forget_split)
masc_run = lab.run("tofu", "MASC", tofu_target(size), forget_split=forget_split)
models = {"Target": load_model(lab.model(tofu_target(size))),
          "Oracle": load_model(lab.model(tofu_oracle(forget_split, size))), "MASC": load_model(masc_run["dir"])}
k0, beta0, rho0 = MASC_DEFAULTS["k"], MASC_DEFAULTS["beta"], MASC_DEFAULTS["rho"]
tau0 = tau_from_rho(rho0)

# %% [markdown]
# ## Margins of the target, the oracle and the unlearned model
#
# Every answer token of the TOFU-mini forget set, under the MASC defaults ($k = 10$, $\beta = 1$,
# $\rho = 0.7$, so $\tau = 0.85$). The target was fine-tuned on these answers, the oracle
# (`retain90`) never saw them, and the MASC model is the target after MASC stopped by itself.

# %% mystnb={"figure": {"caption": "Restricted margins of every forget answer token (k = 10, beta = 1). Positions right of the dashed line (tau = logit(0.7)) violate. The target puts most positions there; the oracle, which never saw these answers, few; MASC moves the target's mass below tau and stops.", "name": "fig-margin-hist"}} tags=["hide-input"]
margins = {name: sequence_margins(model, forget, pad, k0, beta0) for name, model in models.items()}
plot_margin_histograms(margins, tau0, rho0)
plt.show()

# %% [markdown]
# ## How $k$, $\beta$ and $\rho$ move the line
#
# The violation rate $V$ (the mean over sequences of each sequence's share of violating positions)
# for the target and the oracle. A good setting separates them: high for the model that learned
# the forget set, low for the one that did not. A larger $k$ adds more competitors to the
# log-sum-exp and lowers every margin; a larger $\beta$ sharpens both sides; a larger $\rho$ raises
# $\tau$ and tolerates a more confident gold token.
#
# The table has a row per $(k, \beta)$ and a column per $\rho$ and model; the figure after it draws
# the two slices the paper discusses, $V$ against $k$ at the default $\rho$ and against $\rho$ at the
# default $k$ and $\beta$.

# %%
grid = violation_grid({name: models[name] for name in ("Target", "Oracle")}, forget, pad, ks, betas, rhos)
grid.pivot_table(index=["k", "beta"], columns=["rho", "model"], values="V").round(2)

# %% mystnb={"figure": {"caption": "Violation rate of the target (solid) and the oracle (dashed) on the forget set. Left: against k at rho = 0.7 for three values of beta. Right: against rho at k = 10, beta = 1. The gap between the two curves is what the stopping rule can detect.", "name": "fig-margin-knobs"}} tags=["hide-input"]
plot_violation_knobs(grid, betas, k0, beta0, rho0)
plt.show()

# %% [markdown]
# ## Proposition 1: few violations bound exact reproduction
#
# If a fraction $v$ of a continuation's $L$ positions still violates, the other $(1-v)L$ positions
# give the gold token at most $\rho$ (for $\beta = 1$, renormalised over $\{y_t\} \cup S_t$, and at
# most that in the full softmax), so the probability of reproducing the whole continuation exactly
# is at most $\rho^{(1-v)L}$: exact reproduction is a product of $L$ gold-token probabilities, each
# violating position contributes a factor of at most 1 and each other position one of at most
# $\rho$. Below, every forget sequence of each model: the measured probability
# (teacher forcing, the product of gold-token probabilities) against the bound, both in $\log_{10}$.
# Points must lie on or below the diagonal.
#
# The continuation of each sequence is cut as MASC cuts it in training (a random share of the
# answer as prefix, the rest as the continuation $L$), with one fixed generator per model, so the
# three models are measured on the same cuts. The table after the figure counts, per model, the
# sequences, those on which the bound holds, the mean violating share $v$, and the mean measured
# and bound log-probabilities: the bound only bites once $v$ is small, which is where MASC stops.

# %% mystnb={"figure": {"caption": "MASC Proposition 1 on every forget sequence: measured exact-reproduction probability against the bound rho^((1-v)L), log10 scale. The diagonal is equality; no point may lie above it. The target's sequences violate almost everywhere, so their bound is near 1 and says little; after MASC the bound becomes small and the measured probability sits below it.", "name": "fig-proposition1"}} tags=["hide-input"]
prop = proposition1_table(models, collate(forget, pad), dict(MASC_DEFAULTS))
plot_proposition1(prop)
plt.show()

# %% tags=["hide-input"]
summary, v = proposition1_summary(prop), {name: violation_rate(*margins[name], tau0) for name in margins}
glue(**{f"v_{name.lower()}": value for name, value in v.items()}, masc_steps=masc_run["steps"],
     holds=int(summary.bound_holds.sum()), total=int(summary.sequences.sum()),
     separates="the margin separates a model that learned the answers from one that did not" +
     ("" if v["Target"] > v["Oracle"] else " **only weakly here**"))
summary.round(2)

# %% [markdown]
# **What the run shows.** Under the defaults the target violates on {glue:text}`v_target:.0%` of its
# forget positions (macro average) and the oracle on {glue:text}`v_oracle:.0%`: {glue:md}`separates`.
# MASC stopped after {glue:text}`masc_steps` steps at V = {glue:text}`v_masc:.2f`. Proposition 1's bound held on
# {glue:text}`holds` of {glue:text}`total` sequences (it must hold on all of them: a sequence above the bound would be a bug). {doc}`05-stopping` turns the
# violation rate into MASC's stopping rule: how often to probe it, on which sequences, and when
# a low rate is low enough to stop.
