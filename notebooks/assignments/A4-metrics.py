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
# # Assignment 4: did it forget?
#
# TOFU (Maini et al., 2024) asks whether an unlearned model has become indistinguishable from an
# oracle that never saw the forget set. You implement its two metrics under the library's names:
#
# - **Exercise 4.1** `truth_ratio(p_correct, p_perturbed)`: the geometric mean of the perturbed
#   (wrong) answers' probabilities divided by the probability of the paraphrased correct answer,
#   $\mathrm{TR} = \big(\prod_j p_j\big)^{1/n} / (p_\text{correct} + 10^{-10})$ (TOFU's epsilon keeps a
#   collapsed model finite).
# - **Exercise 4.2** `forget_quality(truth_ratios_model, truth_ratios_oracle)`: the p-value of the
#   two-sample Kolmogorov-Smirnov test between the model's and the oracle's per-item truth ratios
#   (`scipy.stats.ks_2samp`). The oracle against itself gives 1.
#
# The check cells grade as the instructor's grader will; do not call the `unlearning` library in
# your answers. The capstone computes forget quality for the smoke laboratory's target.

# %%
import math

from scipy import stats

# %% [markdown]
# ## Exercise 4.1: the truth ratio (5 points)

# %% tags=["exercise"]
def truth_ratio(p_correct, p_perturbed):
    # BEGIN SOLUTION
    if min(p_perturbed) <= 0.0:
        geometric = 0.0
    else:
        geometric = math.exp(sum(math.log(p) for p in p_perturbed) / len(p_perturbed))
    return geometric / (p_correct + 1e-10)
    # END SOLUTION


# %% tags=["check"]
from classroom import check

check("4.1", truth_ratio);

# %% [markdown]
# ## Exercise 4.2: forget quality (5 points)

# %% tags=["exercise"]
def forget_quality(truth_ratios_model, truth_ratios_oracle):
    # BEGIN SOLUTION
    return float(stats.ks_2samp(list(truth_ratios_model), list(truth_ratios_oracle)).pvalue)
    # END SOLUTION


# %% tags=["check"]
check("4.2", forget_quality);

# %% [markdown]
# ## Capstone (ungraded): the target against its oracle
#
# The smoke laboratory's TOFU target saw the forget authors; its oracle (trained on retain90) did
# not. Your truth ratios and forget quality tell them apart, or do not at this size.

# %% tags=["capstone"]
from classroom import capstone

lab = capstone.smoke_models()
ratios = {name: [truth_ratio(pc, pp) for pc, pp in capstone.option_probabilities(lab, lab[name])]
          for name in ("target", "oracle")}
for name, values in ratios.items():
    print(f"{name}: median truth ratio {sorted(values)[len(values) // 2]:.3f} over {len(values)} items")
print(f"forget quality of the target: {forget_quality(ratios['target'], ratios['oracle']):.3g}")
print(f"forget quality of the oracle: {forget_quality(ratios['oracle'], ratios['oracle']):.3g}")
