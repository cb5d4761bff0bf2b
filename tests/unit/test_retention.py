"""The SAGO paper's comparisons (unlearning.retention): the RWKU claim row and the geometry runs'
specification."""

from dataclasses import dataclass

import pandas as pd

from unlearning.claims import HELD
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
