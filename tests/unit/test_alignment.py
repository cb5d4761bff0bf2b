"""The gradient geometry's tables and claims (unlearning.alignment), on logs written by hand."""

import pandas as pd
import pytest

from unlearning.alignment import GeometryVerdicts
from unlearning.claims import HELD, NOT_HELD, PARTLY


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
