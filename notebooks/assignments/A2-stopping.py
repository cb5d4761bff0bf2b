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
# # Assignment 2: when to stop
#
# MASC (Di Gennaro et al., 2026) stops by itself once few forget tokens still violate the margin
# threshold. You implement, under the library's names:
#
# - **Exercise 2.1** `tau_from_rho` and `violation_rate`: the threshold $\tau = \log\frac{\rho}{1-\rho}$
#   and the macro violation rate $V = \frac{1}{B}\sum_i \frac{1}{|A_i|}\sum_{t \in A_i} 1[m_{i,t} > \tau]$
#   (strict inequality; every sequence weighs the same; masked-out positions do not count).
# - **Exercise 2.2** `ViolationStop`: the two-stage rule. Every `every` optimizer steps, `update(step,
#   probe)` measures `probe(trigger_size)`; only if that is at most `tolerance` does it measure
#   `probe(confirm_size)`, and it returns True (stop) iff the confirmation is at most `tolerance` too.
#   Every probe is recorded in `history` as `(step, stage, n, rate)`, stage `"trigger"` or `"confirm"`.
#
# The check cells grade as the instructor's grader will; do not call the `unlearning` library in
# your answers. The capstone runs your rule on a real MASC run of the smoke laboratory.

# %%
import math
from dataclasses import dataclass, field

import torch

# %% [markdown]
# ## Exercise 2.1: tau from rho, and the violation rate (5 points)

# %% tags=["exercise"]
def tau_from_rho(rho):
    # BEGIN SOLUTION
    return math.log(rho / (1.0 - rho))
    # END SOLUTION


def violation_rate(margins, mask, tau):
    # BEGIN SOLUTION
    mask = mask.bool()
    violations = ((margins.detach().float() > tau) & mask).sum(dim=1).float()
    counts = mask.sum(dim=1).float()
    shares = torch.where(counts > 0, violations / counts.clamp(min=1.0), torch.zeros_like(counts))
    return float(shares.mean())
    # END SOLUTION


# %% tags=["check"]
from classroom import check

check("2.1", namespace=globals());

# %% [markdown]
# ## Exercise 2.2: the two-stage stopping rule (5 points)

# %% tags=["exercise"]
@dataclass
class ViolationStop:
    tolerance: float
    every: int = 2
    trigger_size: int = 4
    confirm_size: int = 32
    history: list = field(default_factory=list)

    def update(self, step, probe):
        # BEGIN SOLUTION
        if step % self.every != 0:
            return False
        rate = probe(self.trigger_size)
        self.history.append((step, "trigger", self.trigger_size, rate))
        if rate > self.tolerance:
            return False
        rate = probe(self.confirm_size)
        self.history.append((step, "confirm", self.confirm_size, rate))
        return rate <= self.tolerance
        # END SOLUTION


# %% tags=["check"]
check("2.2", ViolationStop);

# %% [markdown]
# ## Capstone (ungraded): your rule stops a real run
#
# MASC's hinge (the library's) trains the smoke TOFU target; your `violation_rate` measures the
# probes and your `ViolationStop` decides when to stop.

# %% tags=["capstone"]
from classroom import capstone
from unlearning.losses import masc_loss
from unlearning.margin import restricted_margin

lab = capstone.smoke_models()
model = capstone.load(lab["target"])
forget = capstone.qa_batch(lab, "forget10", 16)
tau = tau_from_rho(0.7)


def probe(n):
    with torch.no_grad():
        logits, gold, mask = capstone.next_token(model, {k: v[:n] for k, v in forget.items()})
        return violation_rate(restricted_margin(logits, gold), mask, tau)


rule = ViolationStop(tolerance=0.05, every=2, trigger_size=4, confirm_size=16)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(1, 61):
    logits, gold, mask = capstone.next_token(model, forget)
    loss = masc_loss(restricted_margin(logits, gold), mask, tau, 0.5)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if rule.update(step, probe):
        break
print(f"stopped after {step} steps" if rule.history and rule.history[-1][1] == "confirm"
      and rule.history[-1][3] <= rule.tolerance else f"did not stop within {step} steps")
for entry in rule.history[-4:]:
    print(entry)
