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
# # Assignment 3: retention first
#
# The SAGO paper (Xiao et al., 2026) computes the forget gradient $g_f$ and the retain gradient
# $g_r$ separately and combines them so that the update never opposes retention. You implement
# `combine(forget_grads, retain_grads, rule, alpha=1.0, gamma=1.0)` under the library's name: the
# gradients are lists of tensors, one per parameter tensor, and the result is a new list.
#
# - **Exercise 3.1**, `rule="pcgrad"`: one-sided PCGrad per tensor. For each tensor, if
#   $\langle g_f, g_r\rangle < 0$ replace $g_f$ by $g_f - \frac{\langle g_f, g_r\rangle}{\lVert g_r\rVert^2} g_r$
#   (retention is never projected); return $\alpha g_r + \gamma g_f$.
# - **Exercise 3.2**, `rule="sago"`: sign gating per coordinate. Where the signs of $g_f$ and $g_r$
#   conflict take $\alpha g_r$, everywhere else $\gamma g_f$; a zero has no sign and counts as aligned.
#
# The check cells grade as the instructor's grader will; do not call the `unlearning` library in
# your answers. The capstone measures, on the smoke laboratory's TOFU target, the cosine of each
# rule's update with the retain gradient.

# %%
import torch

# %% [markdown]
# ## Exercises 3.1 and 3.2: `combine` (5 points each)
#
# Any other rule may raise a `ValueError`.

# %% tags=["exercise"]
def combine(forget_grads, retain_grads, rule, alpha=1.0, gamma=1.0):
    # BEGIN SOLUTION
    combined = []
    for g_f, g_r in zip(forget_grads, retain_grads):
        g_f, g_r = g_f.float(), g_r.float()
        if rule == "pcgrad":
            dot = (g_f * g_r).sum()
            if dot < 0:
                g_f = g_f - dot / (g_r * g_r).sum().clamp(min=1e-30) * g_r
            combined.append(alpha * g_r + gamma * g_f)
        elif rule == "sago":
            conflict = torch.sign(g_f) * torch.sign(g_r) < 0
            combined.append(torch.where(conflict, alpha * g_r, gamma * g_f))
        else:
            raise ValueError(f"rule must be pcgrad or sago; got {rule!r}")
    return combined
    # END SOLUTION


# %% tags=["check"]
from classroom import check

check("3.1", combine);

# %% tags=["check"]
check("3.2", combine);

# %% [markdown]
# ## Capstone (ungraded): which update opposes retention?
#
# On the smoke TOFU target, the forget task (gradient ascent on forget10) and the retain task
# (cross-entropy on retain90) give two gradients. Summed, the update opposes retention in some
# parameter tensors (a negative dot product with $g_r$ there); your PCGrad should oppose it in none,
# and SAGO in no coordinate.

# %% tags=["capstone"]
from classroom import capstone

lab = capstone.smoke_models()
model = capstone.load(lab["target"])
g_f, g_r = capstone.task_gradients(model, capstone.qa_batch(lab, "forget10", 8), capstone.qa_batch(lab, "retain90", 8))
print(f"cos(g_f, g_r) = {capstone.cosine(g_f, g_r):+.3f} over {len(g_r)} parameter tensors")
updates = {"sum": [f + r for f, r in zip(g_f, g_r)],
           "pcgrad": combine(g_f, g_r, "pcgrad"), "sago": combine(g_f, g_r, "sago")}
for rule, update in updates.items():
    opposing = sum(float((u * r).sum()) < 0 for u, r in zip(update, g_r))
    print(f"{rule:>6}: cos(update, g_r) = {capstone.cosine(update, g_r):+.3f}; "
          f"tensors where it opposes retention: {opposing}")
