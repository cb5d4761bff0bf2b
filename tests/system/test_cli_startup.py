"""The command starts at once and answers Ctrl-C from its first line (issue 29): building the
parser imports neither torch nor transformers, and an interrupt that lands while the command is
still importing them ends it with the same one line and status 130 as one that lands mid-run."""

import os
import subprocess
import sys

from unlearning.cli import INTERRUPTED

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "UNLEARNING_PROGRESS": "0"}
HEAVY = ("torch", "transformers", "accelerate", "peft", "numpy", "pandas", "scipy")


def _python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env={**ENV, **env}, capture_output=True, text=True, timeout=300)


def test_building_the_parser_and_the_help_import_nothing_heavy():
    done = _python("import sys, contextlib, io\n"
                   "from unlearning.cli import main, parser\n"
                   "from laboratory.cli import main as laboratory\n"
                   "from experiments.cli import main as experiments\n"
                   "parser()\n"
                   "with contextlib.redirect_stdout(io.StringIO()):\n"
                   "    for argv in (['--help'], ['unlearn', '--help'], ['evaluate', '--help']):\n"
                   "        assert main(argv) == 0, argv\n"
                   "    assert laboratory(['learn', '--help']) == 0 and experiments(['check', '--help']) == 0\n"
                   f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_ctrl_c_while_the_command_is_importing_is_one_line_and_status_130(tmp_path):
    """SIGINT at the named point just before the heavy imports (the moment a slow machine's
    Ctrl-C lands in): no traceback, one line, status 130, nothing written."""
    done = subprocess.run([sys.executable, "-m", "laboratory.cli", "world", "--profile", "smoke", "--out", str(tmp_path / "w")],
                          env={**ENV, "UNLEARNING_FAILPOINT": "cli:importing", "UNLEARNING_FAILPOINT_SIGNAL": "INT"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [f"laboratory world: {INTERRUPTED}"]
    assert not (tmp_path / "w").exists()


def test_the_interrupted_line_is_the_same_in_process(monkeypatch, capsys):
    """main() itself catches an interrupt raised anywhere after it starts, parsing included."""
    from unlearning import cli

    def interrupted(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "parser", interrupted)
    assert cli.main(["unlearn"]) == 130
    assert capsys.readouterr().err.strip() == f"unlearning: {INTERRUPTED}"


def test_the_commands_that_run_no_model_import_no_torch(tmp_path):
    """`experiments execute` runs once per chapter (the chapter's kernel imports what it needs) and
    `experiments claims` once per book: neither pays for torch's and transformers' imports."""
    findings = tmp_path / "findings"
    findings.mkdir()
    done = _python("import sys\n"
                   "from experiments.cli import main\n"
                   f"status = main(['claims', '--profile', 'smoke', '--findings', {str(findings)!r}, "
                   f"'--out', {str(tmp_path / 'claims.md')!r}])\n"
                   f"status += main(['execute', {str(tmp_path / 'none.ipynb')!r}, '--out', {str(tmp_path / 'o.ipynb')!r}, "
                   "'--profile', 'smoke', '--parameters', 'none.yaml'])\n"
                   "print(status, sorted(m for m in ('torch', 'transformers') if m in sys.modules))")
    assert done.returncode == 0, done.stderr
    # both ran to their own refusal (no finding yet, no such notebook: 2 each), and neither imported torch
    assert done.stdout.strip().splitlines()[-1] == "4 []", done.stderr
