"""Classroom assignments: the solutions earn full marks, the blank student notebooks earn zero, every
typical mistake listed for an exercise loses exactly that exercise's points, answers that call the
library are refused, and grading runs offline (from the repository and from an autograder zip)."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import nbformat
import pytest

from classroom import assignments, grading
from classroom.checks import EXERCISES
from classroom.cli import main

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "notebooks" / "assignments"
MASTERS = {name: assignments.read_master(path) for name, path in assignments.sources(SOURCES).items()}

# the dataclass fields every ViolationStop variant shares (only `update` differs)
_STOP_FIELDS = """
            @dataclass
            class ViolationStop:
                tolerance: float
                every: int = 2
                trigger_size: int = 4
                confirm_size: int = 32
                history: list = field(default_factory=list)
"""

# one wrong implementation per typical mistake listed in checks.EXERCISES (same labels)
WRONG = {
    "1.1": {
        "gold token left among the top-k": """
            def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):
                gold = logits.gather(-1, targets.long().unsqueeze(-1)).squeeze(-1)
                rivals = logits.gather(-1, logits.detach().topk(k, dim=-1).indices)
                return beta * gold - torch.logsumexp(beta * rivals, dim=-1)""",
        "max instead of log-sum-exp": """
            def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):
                ids = targets.long().unsqueeze(-1)
                others = logits.detach().scatter(-1, ids, float("-inf"))
                rivals = logits.gather(-1, others.topk(k, dim=-1).indices)
                return beta * logits.gather(-1, ids).squeeze(-1) - beta * rivals.max(dim=-1).values""",
        "beta on the gold logit only": """
            def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):
                ids = targets.long().unsqueeze(-1)
                others = logits.detach().scatter(-1, ids, float("-inf"))
                rivals = logits.gather(-1, others.topk(k, dim=-1).indices)
                return beta * logits.gather(-1, ids).squeeze(-1) - torch.logsumexp(rivals, dim=-1)""",
        "margin detached (no gradient)": """
            def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):
                logits = logits.detach()
                ids = targets.long().unsqueeze(-1)
                others = logits.scatter(-1, ids, float("-inf"))
                rivals = logits.gather(-1, others.topk(k, dim=-1).indices)
                return beta * logits.gather(-1, ids).squeeze(-1) - torch.logsumexp(beta * rivals, dim=-1)""",
    },
    "1.2": {
        "no buffer (relu(m - tau))": """
            def masc_loss(margins, mask, tau, eta):
                active = (torch.relu(margins - tau) / eta)[mask.bool()]
                return active.mean() if active.numel() else active.sum()""",
        "no division by eta": """
            def masc_loss(margins, mask, tau, eta):
                active = torch.relu(margins - (tau - eta))[mask.bool()]
                return active.mean() if active.numel() else active.sum()""",
        "mask ignored": """
            def masc_loss(margins, mask, tau, eta):
                return (torch.relu(margins - (tau - eta)) / eta).mean()""",
        "mean per sequence, then over sequences": """
            def masc_loss(margins, mask, tau, eta):
                hinge = torch.relu(margins - (tau - eta)) / eta * mask
                counts = mask.sum(dim=1).clamp(min=1)
                return (hinge.sum(dim=1) / counts).mean()""",
        "NaN on a batch with no active position": """
            def masc_loss(margins, mask, tau, eta):
                return (torch.relu(margins - (tau - eta)) / eta)[mask.bool()].mean()""",
    },
    "2.1": {
        "tau = log(rho)": """
            def tau_from_rho(rho):
                return math.log(rho)""",
        "m >= tau (not strict)": """
            def violation_rate(margins, mask, tau):
                mask = mask.bool()
                shares = ((margins >= tau) & mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
                return float(shares.float().mean())""",
        "one flat mean over tokens": """
            def violation_rate(margins, mask, tau):
                mask = mask.bool()
                return float(((margins > tau) & mask).sum() / mask.sum())""",
        "mask ignored": """
            def violation_rate(margins, mask, tau):
                return float((margins > tau).float().mean(dim=1).mean())""",
    },
    "2.2": {
        "stops on the trigger alone": _STOP_FIELDS + """

                def update(self, step, probe):
                    if step % self.every:
                        return False
                    rate = probe(self.trigger_size)
                    self.history.append((step, "trigger", self.trigger_size, rate))
                    return rate <= self.tolerance""",
        "probes every step": _STOP_FIELDS + """

                def update(self, step, probe):
                    rate = probe(self.trigger_size)
                    self.history.append((step, "trigger", self.trigger_size, rate))
                    if rate > self.tolerance:
                        return False
                    rate = probe(self.confirm_size)
                    self.history.append((step, "confirm", self.confirm_size, rate))
                    return rate <= self.tolerance""",
        "confirms with trigger_size sequences": _STOP_FIELDS + """

                def update(self, step, probe):
                    if step % self.every:
                        return False
                    rate = probe(self.trigger_size)
                    self.history.append((step, "trigger", self.trigger_size, rate))
                    if rate > self.tolerance:
                        return False
                    rate = probe(self.trigger_size)
                    self.history.append((step, "confirm", self.trigger_size, rate))
                    return rate <= self.tolerance""",
        "strict < tolerance": _STOP_FIELDS + """

                def update(self, step, probe):
                    if step % self.every:
                        return False
                    rate = probe(self.trigger_size)
                    self.history.append((step, "trigger", self.trigger_size, rate))
                    if rate >= self.tolerance:
                        return False
                    rate = probe(self.confirm_size)
                    self.history.append((step, "confirm", self.confirm_size, rate))
                    return rate < self.tolerance""",
        "no history": _STOP_FIELDS + """

                def update(self, step, probe):
                    if step % self.every:
                        return False
                    if probe(self.trigger_size) > self.tolerance:
                        return False
                    return probe(self.confirm_size) <= self.tolerance""",
    },
}

# combine: a wrong PCGrad keeps a right SAGO and vice versa, so each loses only its own exercise
_COMBINE = """
    def combine(forget_grads, retain_grads, rule, alpha=1.0, gamma=1.0):
        if rule == "sago":
            return [{sago} for g_f, g_r in zip(forget_grads, retain_grads)]
        {pcgrad}
"""
_SAGO_RIGHT = "torch.where(torch.sign(g_f) * torch.sign(g_r) < 0, alpha * g_r, gamma * g_f)"
_PCGRAD_RIGHT = """
    out = []
    for g_f, g_r in zip(forget_grads, retain_grads):
        dot = (g_f * g_r).sum()
        if dot < 0:
            g_f = g_f - dot / (g_r * g_r).sum() * g_r
        out.append(alpha * g_r + gamma * g_f)
    return out"""


def _body(code: str) -> str:
    return textwrap.indent(textwrap.dedent(code), "    ").strip()


def _pcgrad(body: str) -> str:
    return textwrap.dedent(_COMBINE).format(sago=_SAGO_RIGHT, pcgrad=_body(body))


def _sago(expression: str) -> str:
    return textwrap.dedent(_COMBINE).format(sago=expression, pcgrad=_body(_PCGRAD_RIGHT))


WRONG["3.1"] = {
    "one global projection": _pcgrad("""
        dot = sum((f * r).sum() for f, r in zip(forget_grads, retain_grads))
        norm = sum((r * r).sum() for r in retain_grads)
        scale = dot / norm if dot < 0 else 0.0
        return [alpha * r + gamma * (f - scale * r) for f, r in zip(forget_grads, retain_grads)]"""),
    "two-sided (projects when aligned)": _pcgrad("""
        return [alpha * r + gamma * (f - (f * r).sum() / (r * r).sum() * r) for f, r in zip(forget_grads, retain_grads)]"""),
    "projects g_r instead of g_f": _pcgrad("""
        out = []
        for f, r in zip(forget_grads, retain_grads):
            dot = (f * r).sum()
            if dot < 0:
                r = r - dot / (f * f).sum() * f
            out.append(alpha * r + gamma * f)
        return out"""),
    "ignores alpha and gamma": _pcgrad("""
        out = []
        for f, r in zip(forget_grads, retain_grads):
            dot = (f * r).sum()
            if dot < 0:
                f = f - dot / (r * r).sum() * r
            out.append(r + f)
        return out"""),
    "modifies its inputs": _pcgrad("""
        out = []
        for f, r in zip(forget_grads, retain_grads):
            dot = (f * r).sum()
            if dot < 0:
                f -= dot / (r * r).sum() * r
            out.append(alpha * r + gamma * f)
        return out"""),
}
WRONG["3.2"] = {
    "zeros counted as conflicts": _sago("torch.where(torch.sign(g_f) * torch.sign(g_r) <= 0, alpha * g_r, gamma * g_f)"),
    "adds g_r where aligned (the additive variant)":
        _sago("torch.where(torch.sign(g_f) * torch.sign(g_r) < 0, alpha * g_r, alpha * g_r + gamma * g_f)"),
    "product test (underflow)": _sago("torch.where(g_f * g_r < 0, alpha * g_r, gamma * g_f)"),
    "ignores alpha and gamma": _sago("torch.where(torch.sign(g_f) * torch.sign(g_r) < 0, g_r, g_f)"),
}
WRONG["4.1"] = {
    "arithmetic mean": """
        def truth_ratio(p_correct, p_perturbed):
            return sum(p_perturbed) / len(p_perturbed) / (p_correct + 1e-10)""",
    "ratio upside down": """
        def truth_ratio(p_correct, p_perturbed):
            geometric = math.prod(p_perturbed) ** (1 / len(p_perturbed))
            return p_correct / (geometric + 1e-10)""",
    "no epsilon (division by zero)": """
        def truth_ratio(p_correct, p_perturbed):
            return math.prod(p_perturbed) ** (1 / len(p_perturbed)) / p_correct""",
}
WRONG["4.2"] = {
    "returns the KS statistic": """
        def forget_quality(truth_ratios_model, truth_ratios_oracle):
            return float(stats.ks_2samp(truth_ratios_model, truth_ratios_oracle).statistic)""",
    "a t-test instead of KS": """
        def forget_quality(truth_ratios_model, truth_ratios_oracle):
            return float(stats.ttest_ind(truth_ratios_model, truth_ratios_oracle).pvalue)""",
    "a Mann-Whitney test instead of KS": """
        def forget_quality(truth_ratios_model, truth_ratios_oracle):
            return float(stats.mannwhitneyu(truth_ratios_model, truth_ratios_oracle).pvalue)""",
}


def _solution(assignment: str) -> str:
    return assignments.solutions_script({assignment: MASTERS[assignment]})


def _grades(source: str, assignment: str) -> dict[str, grading.Result]:
    return {r.key: r for r in grading.grade_source(source, assignment, label="test")}


def test_every_listed_mistake_has_a_wrong_implementation():
    for exercise in EXERCISES:
        assert set(WRONG[exercise.key]) == set(exercise.mistakes), exercise.key


@pytest.mark.parametrize("assignment", sorted(MASTERS))
def test_solutions_earn_full_marks_against_the_library(assignment):
    grades = _grades(_solution(assignment), assignment)
    assert {k: (r.earned, r.hints) for k, r in grades.items()} == {k: (r.points, []) for k, r in grades.items()}


@pytest.mark.parametrize("assignment", sorted(MASTERS))
def test_blank_student_notebooks_earn_zero(assignment, tmp_path):
    path = tmp_path / "blank.ipynb"
    nbformat.write(assignments.student_notebook(MASTERS[assignment]), path)
    grades = _grades(grading.graded_source(path), assignment)
    assert all(r.earned == 0 and r.hints == ["not implemented yet"] for r in grades.values())


@pytest.mark.parametrize("key,mistake", [(k, m) for k, mistakes in WRONG.items() for m in mistakes])
def test_a_typical_mistake_loses_its_exercise_only(key, mistake):
    exercise = next(e for e in EXERCISES if e.key == key)
    source = _solution(exercise.assignment) + "\n\n" + textwrap.dedent(WRONG[key][mistake])
    grades = _grades(source, exercise.assignment)
    assert grades[key].earned == 0 and grades[key].hints, mistake
    assert all(r.earned == r.points for k, r in grades.items() if k != key), {k: r.hints for k, r in grades.items()}


def test_the_library_itself_passes_every_check():
    reference = grading.library_reference()
    for exercise in EXERCISES:
        namespace = vars(reference)
        assert grading.grade_exercise(exercise, namespace, reference, set()).hints == [], exercise.key


@pytest.mark.parametrize("answer", [
    "from unlearning.margin import restricted_margin",
    "import unlearning.margin as m\nrestricted_margin = m.restricted_margin",
    "def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):\n"
    "    import unlearning.margin as m\n    return m.restricted_margin(logits, targets, k, beta)",
    # hidden from the static look: the hidden library refuses it while the checks run
    "import importlib\n"
    "def restricted_margin(logits, targets, k=10, beta=1.0, competitor_logits=None, delta=None):\n"
    "    return importlib.import_module('unlearning.margin').restricted_margin(logits, targets, k, beta)",
])
def test_answers_that_call_the_library_are_refused(answer):
    source = _solution("A1") + "\n\n" + answer
    grades = _grades(source, "A1")
    assert grades["1.1"].earned == 0 and "yourself" in " ".join(grades["1.1"].hints)
    assert grades["1.2"].earned == grades["1.2"].points


def test_the_library_is_hidden_while_the_checks_run_and_left_whole():
    import importlib

    from unlearning import margin

    original = margin.restricted_margin
    reference = grading.library_reference()
    with grading.library_hidden():
        with pytest.raises(grading.LibraryCalled):
            importlib.import_module("unlearning.margin")
        assert float(reference.tau_from_rho(0.5)) == 0.0  # the reference keeps working
    assert importlib.import_module("unlearning.margin") is margin and margin.restricted_margin is original


def test_grade_refuses_an_output_under_a_file(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    assert main(["grade", "--assignment", "A1", "--submissions", str(tmp_path), "--out",
                 str(tmp_path / "a-file" / "grades.csv")]) == 2
    assert "--out: not a folder" in capsys.readouterr().err


def test_student_notebooks_keep_no_solution_line():
    for name, master in MASTERS.items():
        student = assignments.student_notebook(master)
        text = "\n".join(cell.source for cell in student.cells)
        assert assignments.BEGIN not in text and assignments.STUB in text
        for cell in master.cells:
            if "exercise" in cell.metadata.get("tags", []):
                inside = cell.source.split(assignments.BEGIN)[1].split(assignments.END)[0]
                leaked = [line.strip() for line in inside.splitlines() if len(line.strip()) > 12 and line.strip() in text]
                assert not leaked, (name, leaked)


def test_book_pages_fold_solutions_in_the_instructor_edition_only(tmp_path):
    instructor = assignments.write_book_pages(tmp_path / "i", "instructor", SOURCES)
    student = assignments.write_book_pages(tmp_path / "s", "student", SOURCES)
    for page in instructor:
        cells = nbformat.read(page, 4).cells
        folded = [c for c in cells if "hide-input" in c.metadata.get("tags", [])]
        assert folded and all(assignments.BEGIN not in c.source for c in folded)
        assert any("What the grader catches" in c.source for c in cells)
    for page in student:
        cells = nbformat.read(page, 4).cells
        assert not any("hide-input" in c.metadata.get("tags", []) for c in cells)
        assert not any("What the grader catches" in c.source for c in cells)
    with pytest.raises(ValueError, match="edition"):
        assignments.write_book_pages(tmp_path / "x", "teacher", SOURCES)
    assert not (tmp_path / "x").exists()


def test_student_book_config_offers_no_sources():
    config = assignments.student_config({"title": "T", "html": {"use_repository_button": True},
                                         "launch_buttons": {"colab_url": "x"},
                                         "sphinx": {"config": {"numfig": True, "html_theme_options": {"a": 1}}}})
    assert config["html"]["use_repository_button"] is False
    assert config["sphinx"]["config"] == {"numfig": True, "html_copy_source": False, "html_show_sourcelink": False,
                                          "html_theme_options": {"a": 1, "use_download_button": False}}
    assert "launch_buttons" not in config


def test_py_percent_submission_skips_check_and_capstone_cells(tmp_path):
    path = tmp_path / "answer.py"
    capstone = '# %% tags=["capstone"]'
    source = SOURCES.joinpath("A1-margin.py").read_text()
    path.write_text(source.replace(capstone, capstone + "\nraise SystemExit('capstone ran')"))
    source = grading.graded_source(path)
    assert "capstone ran" not in source and "check(" not in source
    assert all(r.earned == r.points for r in _grades(source, "A1").values())


def _write_submissions(folder: Path) -> None:
    folder.mkdir()
    (folder / "alice.py").write_text(_solution("A4"))
    nbformat.write(assignments.student_notebook(MASTERS["A4"]), folder / "bob.ipynb")
    (folder / "carol.py").write_text(_solution("A4") + textwrap.dedent(WRONG["4.1"]["ratio upside down"]))
    (folder / "dave.ipynb").write_text("{not json")
    (folder / "notes.txt").write_text("ignored")


def _read_csv(path: Path) -> dict[str, dict]:
    with path.open() as handle:
        return {row["submission"]: row for row in csv.DictReader(handle)}


def test_make_grade_writes_a_score_per_exercise_and_fails_on_unreadable(tmp_path, capsys):
    _write_submissions(tmp_path / "hand-ins")
    assert main(["grade", "--assignment", "A4", "--submissions", str(tmp_path / "hand-ins")]) == 1
    rows = _read_csv(tmp_path / "hand-ins" / "grades.csv")
    assert set(rows) == {"alice.py", "bob.ipynb", "carol.py", "dave.ipynb"}
    alice = rows["alice.py"]
    assert (alice["4.1 truth_ratio"], alice["4.2 forget_quality"], alice["total"]) == ("5", "5", "10")
    assert rows["bob.ipynb"]["total"] == "0"
    assert (rows["carol.py"]["4.1 truth_ratio"], rows["carol.py"]["total"]) == ("0", "5")
    assert rows["dave.ipynb"]["status"].startswith("unreadable") and "dave.ipynb" in capsys.readouterr().err


def test_grade_rejects_an_unknown_assignment_before_reading(tmp_path, capsys):
    assert main(["grade", "--assignment", "A9", "--submissions", str(tmp_path)]) == 2
    assert "A1, A2, A3, A4" in capsys.readouterr().err and not (tmp_path / "grades.csv").exists()


def test_autograder_bundle_grades_without_the_repository(tmp_path):
    written = assignments.build(tmp_path / "out", SOURCES)
    assert {p.parent.name for p in written} == {"student", "solutions", "autograder"} and len(written) == 3 * len(MASTERS)
    bundle = tmp_path / "bundle"
    zipfile.ZipFile(tmp_path / "out" / "autograder" / "A4-metrics-autograder.zip").extractall(bundle)
    _write_submissions(tmp_path / "hand-ins")
    (tmp_path / "hand-ins" / "dave.ipynb").unlink()
    shutil.copy(tmp_path / "out" / "solutions" / "A4-metrics.ipynb", tmp_path / "hand-ins" / "erin.ipynb")
    done = subprocess.run([sys.executable, "run_autograder.py", str(tmp_path / "hand-ins")], cwd=bundle,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    totals = {name: row["total"] for name, row in _read_csv(tmp_path / "hand-ins" / "grades.csv").items()}
    assert totals == {"alice.py": "10", "bob.ipynb": "0", "carol.py": "5", "erin.ipynb": "10"}
