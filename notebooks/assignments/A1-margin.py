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
# # Assignment 1: the restricted margin and the buffered hinge
#
# MASC (Di Gennaro et al., 2026) unlearns a forget token only while the model still prefers the true
# next token over its strongest rivals. You implement the two pieces, under the library's names and
# signatures, so that your answer can be dropped into the library's place:
#
# - **Exercise 1.1** `restricted_margin`: for every position, the margin
#   $m_t = \beta z_{y_t} - \log\sum_{j \in S_t} e^{\beta z_j}$, where $S_t$ holds the top-$k$
#   tokens *other than* the gold token $y_t$ (chosen without gradient; the values keep theirs).
# - **Exercise 1.2** `masc_loss`: the buffered hinge
#   $\frac{1}{|A|}\sum_{t \in A} \mathrm{relu}(m_t - (\tau - \eta)) / \eta$ over the masked-in
#   positions $A$ of the whole batch (one flat mean over tokens; 0 when $A$ is empty).
#
# Run the check cell under each exercise: it grades your function the way the instructor's grader
# will and prints a hint for every failing check. Do not call the `unlearning` library in your
# answers: the grader refuses them. The capstone at the end (ungraded) plugs your functions into
# the smoke laboratory's TOFU target.

# %%
import math

import torch

# %% [markdown]
# ## Exercise 1.1: the restricted margin (5 points)
#
# `logits` has shape `[..., V]`, `targets` the shape `[...]`; return a float tensor of margins with
# the shape of `targets`. You may ignore `competitor_logits` and `delta` (the library's teacher mode
# and delta filter; they are not graded).

# %% tags=["exercise"]
def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):
    # BEGIN SOLUTION
    logits = logits.float()
    gold_ids = targets.long().unsqueeze(-1)
    with torch.no_grad():
        others = logits.detach().scatter(-1, gold_ids, float("-inf"))  # the gold token cannot be a rival
        rival_ids = others.topk(k, dim=-1).indices
    gold = logits.gather(-1, gold_ids).squeeze(-1)
    rivals = logits.gather(-1, rival_ids)
    return beta * gold - torch.logsumexp(beta * rivals, dim=-1)
    # END SOLUTION


# %% tags=["check"]
from classroom import check

check("1.1", restricted_margin);

# %% [markdown]
# ## Exercise 1.2: the buffered hinge (5 points)
#
# `margins` and `mask` have shape `[B, T]` (`mask` is boolean); `tau` and `eta > 0` are floats.
# Return a scalar tensor that stays differentiable.

# %% tags=["exercise"]
def masc_loss(margins, mask, tau, eta):
    # BEGIN SOLUTION
    hinge = torch.relu(margins.float() - (tau - eta)) / eta
    active = hinge[mask.bool()]
    return active.mean() if active.numel() else active.sum()
    # END SOLUTION


# %% tags=["check"]
check("1.2", masc_loss);

# %% [markdown]
# ## Capstone (ungraded): your hinge on a real run
#
# Your two functions drive a few optimizer steps on the smoke laboratory's TOFU target
# (`make models PROFILE=smoke` builds it): the share of forget tokens whose margin still exceeds
# $\tau = \mathrm{logit}(0.7)$ should fall, and the library's margin should agree with yours.

# %% tags=["capstone"]
from classroom import capstone
from unlearning.margin import restricted_margin as library_margin

lab = capstone.smoke_models()
model = capstone.load(lab["target"])
forget = capstone.qa_batch(lab, "forget10", 8)
tau, eta = math.log(0.7 / 0.3), 0.5
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(8):
    logits, gold, mask = capstone.next_token(model, forget)
    margins = restricted_margin(logits, gold, k=10)
    if step == 0:
        print(f"largest difference from the library's margin: {(margins - library_margin(logits, gold, k=10)).abs().max():.2e}")
    share = float(((margins > tau) & mask).sum() / mask.sum())
    print(f"step {step}: {share:.0%} of forget tokens above tau")
    loss = masc_loss(margins, mask, tau, eta)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
