"""The claims registry, findings and the "Claims at a glance" page (experiments.claims)."""

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from experiments.claims import CANNOT_TELL, CLAIMS, HELD, NOT_HELD, PARTLY, load_findings, record, render_page, tally
from experiments.retention import sago_gains
from experiments.intervals import from_table
from experiments.verdicts import Verdict, keeps_more

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LIBRARY = "".join(p.read_text() for p in (NOTEBOOKS.parent / "src").rglob("*.py"))  # every package


def test_tally_is_all_some_or_none():
    assert tally(3, 3) == HELD
    assert tally(1, 3) == PARTLY
    assert tally(0, 2) == NOT_HELD
    for bad in ((0, 0), (4, 3), (-1, 2)):
        with pytest.raises(ValueError):
            tally(*bad)


def test_claim_keys_are_unique_and_every_chapter_records_its_claims():
    keys = [c.key for c in CLAIMS]
    assert len(keys) == len(set(keys))
    for claim in CLAIMS:
        source = (NOTEBOOKS / f"{claim.chapter}.py").read_text()
        # recorded by the chapter itself or by the library's verdict that the chapter calls
        assert f'"{claim.key}"' in source or f'record("{claim.key}"' in LIBRARY, claim.key
        assert f"# ({claim.label})=" in source, f"{claim.chapter} has no section labelled {claim.label}"


def test_record_writes_a_finding_and_rejects_bad_ones(tmp_path):
    line = record("masc-speed", "2.0x", HELD, "smoke", folder=tmp_path)
    assert "**held**" in line and "{doc}`claims`" in line
    assert json.loads((tmp_path / "masc-speed.json").read_text()) == {
        "key": "masc-speed", "ours": "2.0x", "verdict": HELD, "reason": "", "profile": "smoke", "resolution": "", "evidence": ""}
    record("masc-speed", "3x", Verdict(PARTLY, "below the paper", "timings resampled", "speed-up 3.0 [2.5, 3.5]x"), "smoke",
           folder=tmp_path)
    written = json.loads((tmp_path / "masc-speed.json").read_text())
    assert (written["verdict"], written["reason"], written["resolution"], written["evidence"]) == (
        PARTLY, "below the paper", "timings resampled", "speed-up 3.0 [2.5, 3.5]x")
    with pytest.raises(ValueError, match="unknown claim"):
        record("masc-sped", "2.0x", HELD, "smoke", folder=tmp_path)
    with pytest.raises(ValueError, match="unknown verdict"):
        record("masc-speed", "2.0x", "yes", "smoke", folder=tmp_path)
    with pytest.raises(ValueError, match="needs its reason"):
        record("masc-speed", "2.0x", CANNOT_TELL, "smoke", folder=tmp_path)


def _all(tmp_path, profile="smoke"):
    for claim in CLAIMS:
        record(claim.key, f"ours for {claim.key}", CANNOT_TELL if claim.key == "sago-rwku" else HELD, profile,
               reason="a floor | here" if claim.key == "sago-rwku" else "", folder=tmp_path)


def test_load_findings_names_missing_and_stale_claims(tmp_path):
    _all(tmp_path)
    assert set(load_findings(tmp_path, "smoke")) == {c.key for c in CLAIMS}
    (tmp_path / "masc-speed.json").unlink()
    record("sago-tighter", "x", HELD, "mini", folder=tmp_path)
    with pytest.raises(ValueError) as error:
        load_findings(tmp_path, "smoke")
    assert "no finding for masc-speed (06-tofu)" in str(error.value)
    assert "sago-tighter (10-geometry: profile mini)" in str(error.value)


def test_page_has_one_row_per_claim_with_link_and_verdict(tmp_path):
    _all(tmp_path)
    page = render_page(load_findings(tmp_path, "smoke"), "smoke")
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith(("| Claim", "| Guarantee"))]
    assert len(rows) == len(CLAIMS)
    for claim in CLAIMS:
        row = next(r for r in rows if r.startswith(f"| {claim.statement}") and f"<{claim.label}>`" in r)
        assert f"<{claim.label}>`" in row and f"ours for {claim.key}" in row
        assert ("✓ kept" in row) == claim.construction
        assert ("*(beyond the paper)*" in row) == claim.beyond_paper
    assert "? cannot tell here: a floor \\| here |" in page  # the pipe inside a cell is escaped
    findings = [c for c in CLAIMS if not c.construction]  # construction checks are not counted as findings
    assert f"Of {len(findings)} findings: {len(findings) - 1} held, 0 partly, 0 did not hold, 1 cannot tell here." in page
    guarantees = page.index("Guarantees by construction")
    assert page.index("| PCGrad and SAGO never oppose retention") > guarantees
    assert re.search(r"profile \*\*smoke\*\*", page)


def _grid(rows):
    return pd.DataFrame(rows, columns=["objective", "rule", "forget", "neighbour"])


def test_sago_gains_by_hand():
    results = _grid([("GradDiff", "sum", 0.30, 0.10), ("GradDiff", "pcgrad", 0.32, 0.20), ("GradDiff", "sago", 0.325, 0.25),
                     ("NPO", "sum", 0.3, 0.1), ("NPO", "pcgrad", 0.2, 0.3), ("NPO", "sago", 0.4, 0.5),
                     ("SimNPO", "sum", 0.3, 0.1)])  # no PCGrad/SAGO runs: left out
    gains = sago_gains(results, ["GradDiff", "NPO", "SimNPO"])
    assert [g["objective"] for g in gains] == ["GA+GD", "NPO"]
    assert gains[0]["points"] == pytest.approx(5.0) and gains[1]["points"] == pytest.approx(20.0)
    def judged(g, forget_half, neighbour_half):
        return keeps_more(from_table(g["sago"] - g["pcgrad"], neighbour_half),
                          from_table(g["forget_sago"] - g["forget_pcgrad"], forget_half), "SAGO", "PCGrad").verdict

    assert judged(gains[0], 0.01, 0.01) == HELD  # forget 0.325 within 0.01 of 0.32
    assert judged(gains[1], 0.01, 0.01) == CANNOT_TELL  # a gain bought with weaker forgetting: confounded
    assert judged(gains[0], 0.01, 0.06) == CANNOT_TELL  # 5 points inside a 6-point interval
