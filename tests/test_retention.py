"""The SAGO paper's comparisons (unlearning.retention, unlearning.alignment): the RWKU claim row,
the geometry runs' specification, and the geometry claims judged on logs written by hand."""

from dataclasses import dataclass

import pandas as pd
import pytest

from unlearning.alignment import GeometryVerdicts
from unlearning.claims import HELD, NOT_HELD, PARTLY
from unlearning.retention import WMDP_BIO, geometry_runs, rwku_record


def test_the_rwku_row_names_each_objective_s_gain_and_its_verdict(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = pd.DataFrame([("GradDiff", "sum", 0.30, 0.10), ("GradDiff", "pcgrad", 0.32, 0.20),
                            ("GradDiff", "sago", 0.325, 0.25)], columns=["objective", "rule", "forget", "neighbour"])
    line = rwku_record("sago-rwku", results, ["GradDiff"], {"forget": 0.01, "neighbour": 0.01}, "smoke")
    # SAGO keeps 5 points more neighbour knowledge at forgetting within one probe of PCGrad's: held
    assert f"**{HELD}**" in line and (tmp_path / "book/generated/findings/sago-rwku.json").is_file()
    empty = rwku_record("sago-rwku", results.iloc[:1], ["GradDiff"], {"forget": 0.01, "neighbour": 0.01}, "smoke",
                        empty="no triple")
    assert "cannot tell" in empty
    assert "no triple" in (tmp_path / "book/generated/findings/sago-rwku.json").read_text()


@dataclass(frozen=True)
class _Spec:
    name: str
    options: dict
    optim: object


class _SpecLab:
    """Records the specifications it is asked to run."""

    def __init__(self):
        self.specs = []

    def recipe_spec(self, recipe, run_name, start, **options):
        from unlearning.engine import OptimConfig

        return _Spec(run_name, options, OptimConfig())

    def run_spec(self, spec, start):
        self.specs.append(spec)
        return {"log": [], "spec": spec}


def test_the_geometry_runs_log_the_geometry_of_each_rule_on_wmdp_bio():
    lab = _SpecLab()
    runs = geometry_runs(lab, "GradDiff", ["sum", "sago"], "base-xs")
    assert list(runs) == ["sum", "sago"] and len(lab.specs) == 2
    assert all(s.options == {"rule": r, "record_geometry": True, **WMDP_BIO} for s, r in zip(lab.specs, runs))
    geometry_runs(lab, "GradDiff", ["sago"], "base-xs", optimizer="sgd")
    assert lab.specs[-1].optim.optimizer == "sgd" and lab.specs[0].optim.optimizer != "sgd"


def _logs(rows):
    return pd.DataFrame(rows, columns=["rule", "cos_final_retain", "cos_forget_retain", "cos_retain_sago",
                                       "cos_retain_pcgrad"])


def test_the_geometry_claims_read_the_smallest_cosine_and_the_share_of_tighter_steps(tmp_path, monkeypatch):
    logs = _logs([("sum", -0.2, -0.5, 0.9, 0.8), ("sum", 0.1, 0.2, 0.4, 0.6),
                  ("sago", 0.3, -0.5, 0.9, 0.7), ("sago", 0.05, 0.1, 0.5, 0.4),
                  ("pcgrad", 0.0, -0.4, None, None)])
    judged = GeometryVerdicts(logs, ["sum", "pcgrad", "sago"])
    said = judged.sentences()
    assert said["nonneg"] == "pcgrad 0.000, sago 0.050" and said["sum_min"] == pytest.approx(-0.2)
    # four steps with both rules: SAGO better at three (two of two with a conflict, one of two without)
    assert said["share"] == pytest.approx(0.75) and (said["better_conflict"], said["conflict"]) == (2, 2)
    assert (said["better_aligned"], said["aligned"]) == (1, 2) and said["tendency"] == "a tendency, not a theorem"
    monkeypatch.chdir(tmp_path)
    lines = judged.records("smoke").split("\n\n")
    assert f"**{HELD}**" in lines[0] and f"**{PARTLY}**" in lines[1]
    broken = GeometryVerdicts(_logs([("sago", -0.1, 0.0, 0.5, 0.4)]), ["sago"])
    assert f"**{NOT_HELD}**" in broken.records("smoke").split("\n\n")[0]
