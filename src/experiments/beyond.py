"""Beyond the papers (chapter 16): the two papers combined. MASC's forget and retain terms under
PCGrad or SAGO synthesis (arXiv 2604.14808, section 3) instead of the MASC paper's sum, and MASC's
violation stopping rule (arXiv 2606.02920, section 3.3) ending NPO, SimNPO and SAGO runs that the
papers run for a fixed budget."""

from __future__ import annotations

import pandas as pd

from experiments.lab import Lab, Protocol, eval_config, tofu_oracle, tofu_target

VARIANTS = [  # (label, method, synthesis rule, stop)
    ("MASC (paper: sum)", "MASC", "sum", "violation"),
    ("MASC + PCGrad", "MASC", "pcgrad", "violation"),
    ("MASC + SAGO", "MASC", "sago", "violation"),
    ("NPO (fixed budget)", "NPO", "sum", "fixed"),
    ("NPO + violation stop", "NPO", "sum", "violation"),
    ("SimNPO (fixed budget)", "SimNPO", "sum", "fixed"),
    ("SimNPO + violation stop", "SimNPO", "sum", "violation"),
    ("NPO+KLR (fixed budget)", "NPO+KLR", "sum", "fixed"),
    ("SimNPO+GD + SAGO (fixed budget)", "SimNPO+GD", "sago", "fixed"),
    ("SimNPO+GD + SAGO + violation stop", "SimNPO+GD", "sago", "violation"),
]
COLUMNS = {"steps": "steps", "stopped by itself": "stopped by itself", "seconds": "seconds",
           "forget_Q_A_ROUGE": "forget ROUGE-L", "forget_Q_A_Prob": "forget Prob", "forget_quality": "forget quality",
           "model_utility": "model utility"}


def variant_results(lab: Lab, size: str, forget_split: str, protocol: Protocol, variants=VARIANTS):
    """Every variant run from TOFU-mini's target of `size` under `protocol` and evaluated against the
    split's retain-only oracle. Returns (a row per variant, the oracle's metrics)."""
    config = eval_config("tofu", forget_split)
    oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
    target, rows = tofu_target(size), []
    for label, method, rule, stop in variants:
        run = lab.run("tofu", method, target, protocol, forget_split=forget_split, rule=rule, stop=stop)
        rows.append({"variant": label, "method": method, "rule": rule, "stop": stop, "steps": run["steps"],
                     "stopped by itself": run["stopped"], "seconds": run["train_seconds"] + run["probe_seconds"],
                     **lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)})
    return pd.DataFrame(rows).set_index("variant"), oracle


def contrast(results, base: str, variant: str) -> str:
    """`variant` against `base` (two rows of `variant_results`): seconds, forget ROUGE-L and model
    utility, the variant's number first."""
    b, v = results.loc[base], results.loc[variant]
    return (f"{variant}: {v['seconds']:.1f} s vs {b['seconds']:.1f} s, forget ROUGE-L {v['forget_Q_A_ROUGE']:.2f} vs "
            f"{b['forget_Q_A_ROUGE']:.2f}, model utility {v['model_utility']:.2f} vs {b['model_utility']:.2f}")
