"""The gradient geometry's tables and claims (experiments.alignment), on logs written by hand."""

import pandas as pd
import pytest

from experiments.alignment import GeometryVerdicts
from experiments.claims import CANNOT_TELL, HELD, NOT_HELD


def _logs(rows):
    return pd.DataFrame(rows, columns=["rule", "cos_final_retain", "cos_forget_retain", "cos_retain_sago",
                                       "cos_retain_pcgrad"])


def test_the_geometry_claims_read_the_smallest_cosine_and_the_share_of_tighter_steps(tmp_path, monkeypatch):
    logs = _logs([("sum", -0.2, -0.5, 0.9, 0.8), ("sum", 0.1, 0.2, 0.4, 0.6),
                  ("sago", 0.3, -0.5, 0.9, 0.7), ("sago", 0.05, 0.1, 0.5, 0.4),
                  ("pcgrad", 0.0, -0.4, None, None), ("pcgrad", 0.2, -0.4, None, None)])
    judged = GeometryVerdicts(logs, ["sum", "pcgrad", "sago"])
    said = judged.sentences()
    assert said["nonneg"] == "pcgrad 0.000, sago 0.050" and said["sum_min"] == pytest.approx(-0.2)
    # four steps with both rules: SAGO better at three (two of two with a conflict, one of two without)
    assert said["share"] == pytest.approx(0.75) and (said["better_conflict"], said["conflict"]) == (2, 2)
    assert (said["better_aligned"], said["aligned"]) == (1, 2) and said["tendency"] == "a tendency, not a theorem"
    monkeypatch.chdir(tmp_path)
    lines = judged.records("smoke").split("\n\n")
    # mean Comb-Retain over two SAGO steps (0.175) against two PCGrad steps (0.1): inside the bootstrap interval
    assert f"**{HELD}**" in lines[0] and f"**{CANNOT_TELL}**" in lines[1]
    assert judged.difference.value == pytest.approx(0.075)
    broken = GeometryVerdicts(_logs([("sago", -0.1, 0.0, 0.5, 0.4)]), ["sago"])
    assert f"**{NOT_HELD}**" in broken.records("smoke").split("\n\n")[0]


def test_sago_is_tighter_by_the_mean_cosine_of_its_run():
    import numpy as np

    rng = np.random.default_rng(0)
    rows = [("sago", c, -0.2, None, None) for c in 0.87 + rng.normal(0, 0.05, 60)]
    rows += [("pcgrad", c, -0.2, None, None) for c in 0.76 + rng.normal(0, 0.05, 60)]
    judged = GeometryVerdicts(_logs(rows), ["pcgrad", "sago"])  # the authors' page: 0.87 against 0.76
    assert judged.difference.positive and "in blocks of 4" in judged.difference.how
    rows = [(r, c + (0.3 if r == "pcgrad" else 0), f, a, b) for r, c, f, a, b in rows]
    assert GeometryVerdicts(_logs(rows), ["pcgrad", "sago"]).difference.negative
