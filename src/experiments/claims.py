"""The papers' claims, what each chapter found about them, and the "Claims at a glance" page.

Every claim of the two papers that the book tests is registered here once (`CLAIMS`): the claim in
one line, the paper's own number, the chapter and the label of the section that tests it. A chapter
computes its verdict from its results and calls `record(...)`, which writes one small JSON file per
claim (a *finding*) under `book/generated/findings/`. `render_page` turns the registry and the
findings into the Markdown page `book/generated/claims.md` (`experiments claims`, run by `make book`
after every chapter): every cell of that page comes from a finding, none is typed by hand.

Verdicts (`VERDICTS`): held, partly, did not hold, and cannot tell here, the last always with its
reason (a metric on a floor for target and oracle alike, say). The rules that decide them live in
`experiments.verdicts` (tested there); a chapter passes its results in and records what comes back,
with the differences it decided on and their 95 % intervals (`evidence`) and how those intervals
were computed (`resolution`: items, resamples, seeds). Guarantees that hold by construction of a rule
(`Claim.construction`) are checks of the implementation, not findings: the page shows them apart.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from unlearning.records import write_text_atomically

HELD, PARTLY, NOT_HELD, CANNOT_TELL = "held", "partly", "did not hold", "cannot tell here"
VERDICTS = (HELD, PARTLY, NOT_HELD, CANNOT_TELL)
VERDICT_MARKS = {HELD: "✓", PARTLY: "◐", NOT_HELD: "✗", CANNOT_TELL: "?"}  # plain glyphs: no emoji font needed
FINDINGS = Path("book/generated/findings")
PAPERS = {"MASC": ("MASC: margin self-correction", "Di Gennaro et al. {cite}`digennaro2026masc`"),
          "SAGO": ("PCGrad and SAGO: retention first", "Xiao et al. {cite}`xiao2026sago`")}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper as the book tests it in one chapter (the same claim tested on the
    laboratory models and on the real model is two claims: two chapters, two verdicts)."""
    key: str
    paper: str          # "MASC" or "SAGO"
    statement: str      # the claim in one line
    paper_value: str    # the paper's own number
    chapter: str        # notebook name, e.g. "06-tofu"
    label: str          # MyST label of the section that shows the verdict
    setting: str        # where it is tested: "TOFU-mini", "real model", ...
    construction: bool = False  # a guarantee of the algorithm, checked (not a finding about the world)
    beyond_paper: bool = False  # a question the book adds beside the paper's own claim


CLAIMS: tuple[Claim, ...] = (
    Claim("masc-memorise-scale", "MASC", "Larger models memorise more verbatim.",
          "Qwen2.5 0.5B-7B (scale study, abstract)", "03-learning", "verdict-learning", "laboratory targets xs-l"),
    Claim("masc-speed", "MASC", "MASC unlearns in a fraction of the baselines' run time.",
          "≈6x faster than the fastest baseline on TOFU (SimNPO 545 s vs MASC 88 s; 4.3-9.3x within the error bars)",
          "06-tofu", "verdict-tofu", "TOFU-mini"),
    Claim("masc-speed-to-good-model", "MASC", "MASC holds a good model sooner than the baselines once each pays for "
          "finding it (MASC its probes, a baseline the evaluations that select its checkpoint).",
          "not in the paper (its baselines run a fixed budget)", "06-tofu", "tofu-time-to-quality", "TOFU-mini",
          beyond_paper=True),
    Claim("masc-tradeoff", "MASC", "MASC's forget/retain trade-off is competitive with the baselines'.",
          "best or tied on 3 of 4 TOFU axes (±0.03); best model utility (0.65 vs 0.50-0.58)", "06-tofu", "verdict-tofu",
          "TOFU-mini"),
    Claim("masc-muse", "MASC", "MASC removes MUSE's verbatim memorisation like the baselines.",
          "VerbMem forget ≲ 0.05-0.08 for every method (News, Books)", "07-muse", "verdict-muse", "MUSE-mini"),
    Claim("masc-scale-invariant", "MASC", "After unlearning, forget metrics do not depend on scale while utility "
          "grows with it.", "Qwen2.5 0.5B-7B (abstract; no per-size numbers)", "08-scale", "verdict-scale",
          "TOFU-mini sizes"),
    Claim("masc-quantization", "MASC", "MASC's forgetting survives 4-bit quantization.",
          "robustness check; MUSE evaluation quantised (FP4) by default", "09-quantization", "verdict-quantization",
          "TOFU-mini"),
    Claim("sago-never-opposes", "SAGO", "PCGrad and SAGO never oppose retention: cos(g_final, g_r) ≥ 0 at every "
          "step.", "guaranteed by construction (section 5)", "10-geometry", "verdict-geometry", "WMDP-mini gradients",
          construction=True),
    Claim("sago-tighter", "SAGO", "SAGO aligns the update more tightly with retention than PCGrad.",
          "Comb-Retain cosine SAGO > PCGrad (geometry table)", "10-geometry", "verdict-geometry", "WMDP-mini gradients"),
    Claim("sago-wmdp-recovery", "SAGO", "PCGrad and SAGO recover the utility that +GD loses, at similar forgetting.",
          "WMDP-Bio MMLU recovery GA+GD 42 % → 90.5 % (SAGO); SimNPO+GD 44.6 % → 94.0 % (PCGrad) → 96.0 % (SAGO)",
          "11-wmdp", "verdict-wmdp", "WMDP-mini"),
    Claim("sago-granularity", "SAGO", "Retention rises from global PCGrad to module-wise PCGrad to SAGO.",
          "GA+GD on WMDP-Bio: MMLU 51.0 / 53.0 / 54.1", "11-wmdp", "verdict-wmdp", "WMDP-mini"),
    Claim("sago-rwku", "SAGO", "SAGO keeps more neighbour knowledge than PCGrad on RWKU.",
          "+3.4 to +13.3 neighbour ROUGE-L points", "12-rwku", "verdict-rwku", "RWKU-mini"),
    Claim("masc-speed-real", "MASC", "MASC unlearns in a fraction of the baselines' run time.",
          "≈6x faster than the fastest baseline on TOFU (4.3-9.3x within the error bars)", "14-tofu-real",
          "verdict-tofu-real", "real model, TOFU"),
    Claim("masc-tradeoff-real", "MASC", "MASC's forget/retain trade-off is competitive with the baselines'.",
          "best or tied on 3 of 4 TOFU axes (±0.03); best model utility", "14-tofu-real", "verdict-tofu-real",
          "real model, TOFU"),
    Claim("masc-quantization-real", "MASC", "MASC's forgetting survives 4-bit quantization.",
          "robustness check; MUSE evaluation quantised (FP4) by default", "14-tofu-real", "verdict-tofu-real",
          "real model, TOFU"),
    Claim("sago-rwku-real", "SAGO", "SAGO keeps more neighbour knowledge than PCGrad on RWKU.",
          "+3.4 to +13.3 neighbour ROUGE-L points", "15-rwku-real", "verdict-rwku-real", "real model, RWKU"),
)
CLAIM_KEYS = {c.key: c for c in CLAIMS}


@dataclass(frozen=True)
class Finding:
    """What one build found about one claim: our number (text), the verdict and, for
    "cannot tell here", why; `profile` is the notebook profile that produced it."""
    key: str
    ours: str
    verdict: str
    reason: str
    profile: str
    resolution: str = ""  # how the intervals were computed: items, resamples, seeds (or the paper's table)
    evidence: str = ""    # the differences the verdict decided on, each with its 95 % interval


def tally(successes: int, total: int) -> str:
    """The verdict of a claim made about `total` cases (objectives, splits...) of which
    `successes` bore it out: held when all did, did not hold when none did, partly between."""
    if total <= 0 or not 0 <= successes <= total:
        raise ValueError(f"need 0 <= successes <= total and total > 0, got {successes} of {total}")
    return HELD if successes == total else NOT_HELD if successes == 0 else PARTLY


def check_finding(finding: Finding) -> Finding:
    """`finding`, or a ValueError naming what is wrong (unknown claim, unknown verdict, a
    "cannot tell here" without its reason)."""
    if finding.key not in CLAIM_KEYS:
        raise ValueError(f"unknown claim {finding.key!r}; registered: {', '.join(CLAIM_KEYS)}")
    if finding.verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {finding.verdict!r}; one of {', '.join(VERDICTS)}")
    if finding.verdict == CANNOT_TELL and not finding.reason.strip():
        raise ValueError(f"claim {finding.key!r}: 'cannot tell here' needs its reason")
    return finding


def record(key: str, ours: str, verdict, profile: str, reason: str = "", folder: Path | str = FINDINGS,
           resolution: str = "", evidence: str = "") -> str:
    """Write a chapter's finding about claim `key` to `folder/key.json` and return one line of
    Markdown saying it, for the chapter's verdict paragraph. `verdict` is a verdict string or a
    `verdicts.Verdict` (its reason, resolution and evidence are used)."""
    if not isinstance(verdict, str):
        verdict, reason, resolution, evidence = verdict.verdict, verdict.reason, verdict.resolution, verdict.evidence
    finding = check_finding(Finding(key, ours, verdict, reason, profile, resolution, evidence))
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_text_atomically(folder / f"{key}.json", json.dumps(asdict(finding), indent=1, ensure_ascii=False) + "\n")
    claim = CLAIM_KEYS[key]
    because = f" ({reason})" if reason else ""
    return f"*{claim.statement}* — **{verdict}**{because}; on {{doc}}`claims`."


def load_findings(folder: Path | str, profile: str) -> dict[str, Finding]:
    """Every registered claim's finding from `folder`; a ValueError listing the claims without
    one, or whose finding came from another profile (a chapter that did not run in this build)."""
    folder = Path(folder)
    findings, missing, stale = {}, [], []
    for claim in CLAIMS:
        path = folder / f"{claim.key}.json"
        if not path.is_file():
            missing.append(f"{claim.key} ({claim.chapter})")
            continue
        finding = check_finding(Finding(**json.loads(path.read_text())))
        if finding.profile != profile:
            stale.append(f"{claim.key} ({claim.chapter}: profile {finding.profile})")
        findings[claim.key] = finding
    if missing or stale:
        raise ValueError(f"claims page for profile {profile}: " + "; ".join(
            part for part in (f"no finding for {', '.join(missing)}" if missing else "",
                              f"findings of another profile for {', '.join(stale)}" if stale else "") if part)
            + " (run `make notebooks PROFILE=" + profile + "`)")
    return findings


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def render_page(findings: dict[str, Finding], profile: str) -> str:
    """The "Claims at a glance" page (MyST Markdown): per paper, a table of findings (a row per
    claim, with the differences the verdict decided on, their 95 % intervals and how these were
    computed) and a short table of the guarantees that
    hold by construction, checked."""
    counted = {k: f for k, f in findings.items() if not CLAIM_KEYS[k].construction}
    counts = {v: sum(f.verdict == v for f in counted.values()) for v in VERDICTS}
    lines = [
        "(claims)=",
        "# Claims at a glance",
        "",
        f"Every claim of the two papers that this book tests, with the paper's number, ours, the differences the "
        f"verdict decided on with their 95 % intervals (paired over the same evaluation items; how each was computed "
        f"beside it) and a verdict. Each row was written by the chapter that tests the claim, from its "
        f"own results and a tested decision rule (`experiments.verdicts`), when this book was built (profile "
        f"**{profile}**); the link leads to the section that shows the evidence. Of {len(counted)} findings: "
        + ", ".join(f"{counts[v]} {v}" for v in VERDICTS) + ".",
        "",
        "Verdicts: " + "; ".join(f"{VERDICT_MARKS[v]} {v}" for v in VERDICTS) + ". \"Cannot tell here\" means the "
        "experiment has no signal to decide (a metric on a floor for target and oracle alike, a difference whose 95 % "
        "interval covers zero, or a run that did not behave as its paper reports); the reason is given. "
        "Rows marked *beyond the paper* ask "
        "a question the paper does not; guarantees that hold by construction are checks of the code, listed apart.",
    ]
    for paper, (title, source) in PAPERS.items():
        lines += ["", f"## {title}", "", f"{source}.", "",
                  "| Claim | Tested on | The paper | Here | Our difference (95 % interval) | How | Verdict |",
                  "|---|---|---|---|---|---|---|"]
        for claim in (c for c in CLAIMS if c.paper == paper and not c.construction):
            f = findings[claim.key]
            verdict = f"{VERDICT_MARKS[f.verdict]} {f.verdict}" + (f": {f.reason}" if f.reason else "")
            statement = claim.statement + (" *(beyond the paper)*" if claim.beyond_paper else "")
            lines.append(f"| {_cell(statement)} | {{ref}}`{claim.setting} <{claim.label}>` | "
                         f"{_cell(claim.paper_value)} | {_cell(f.ours)} | {_cell(f.evidence or '-')} | "
                         f"{_cell(f.resolution or '-')} | {_cell(verdict)} |")
        checks = [c for c in CLAIMS if c.paper == paper and c.construction]
        if checks:
            lines += ["", "Guarantees by construction, checked on every run:", "", "| Guarantee | Tested on | Here | Check |",
                      "|---|---|---|---|"]
            for claim in checks:
                f = findings[claim.key]
                check = {HELD: "✓ kept", NOT_HELD: "✗ violated (a bug)"}.get(f.verdict, f"? {f.verdict}")
                lines.append(f"| {_cell(claim.statement)} | {{ref}}`{claim.setting} <{claim.label}>` | {_cell(f.ours)} | "
                             f"{_cell(check + (f': {f.reason}' if f.reason else ''))} |")
    return "\n".join(lines) + "\n"


def write_page(folder: Path | str, out: Path | str, profile: str) -> Path:
    """Render the claims page from the findings in `folder` to `out` (the Makefile's step)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(out, render_page(load_findings(folder, profile), profile))
    return out
