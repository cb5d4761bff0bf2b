"""Chapter 16's variants (experiments.beyond): every variant run and evaluated against the
oracle, and the sentence that contrasts two of them."""

import pytest

from experiments.beyond import VARIANTS, contrast, variant_results


class _Lab:
    """Runs are their (method, rule, stop); metrics a function of the run's steps."""

    def __init__(self):
        self.runs = []

    def model(self, name):
        return name

    def run(self, benchmark, method, model, protocol, *, forget_split, rule, stop):
        self.runs.append((method, rule, stop))
        steps = 10 if stop == "violation" else 40
        return {"dir": f"{method}-{rule}-{stop}", "steps": steps, "stopped": stop == "violation",
                "train_seconds": steps / 10, "probe_seconds": 0.5 if stop == "violation" else 0.0}

    def evaluate(self, benchmark, model_dir, config=None, oracle=None):
        if oracle is None:
            return {"forget_Q_A_ROUGE": 0.3, "model_utility": 0.5}
        fixed = model_dir.endswith("fixed")
        return {"forget_Q_A_ROUGE": 0.1 if fixed else 0.35, "model_utility": 0.2 if fixed else 0.45}


def test_every_variant_runs_once_and_is_judged_against_the_oracle():
    lab = _Lab()
    results, oracle = variant_results(lab, "xs", "forget10", protocol=None)
    assert lab.runs == [(method, rule, stop) for _, method, rule, stop in VARIANTS]
    assert oracle == {"forget_Q_A_ROUGE": 0.3, "model_utility": 0.5}
    npo = results.loc["NPO + violation stop"]
    assert npo["seconds"] == pytest.approx(1.5) and bool(npo["stopped by itself"]) and npo["rule"] == "sum"
    assert contrast(results, "NPO (fixed budget)", "NPO + violation stop") == (
        "NPO + violation stop: 1.5 s vs 4.0 s, forget ROUGE-L 0.35 vs 0.10, model utility 0.45 vs 0.20")
