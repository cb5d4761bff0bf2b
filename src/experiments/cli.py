"""The `experiments` command: claims, execute, check (the book's pages and profiles).

    experiments check --profile mini     # every YAML of a profile, before anything runs
    experiments execute build/notebooks/06-tofu.ipynb --out book/generated/06-tofu.ipynb \\
        --profile mini --parameters notebooks/profiles/mini/06-tofu.yaml
    experiments claims --profile smoke --out book/generated/claims.md    # after every chapter ran

None of them runs a model, so none imports torch (a chapter's kernel makes its own).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from unlearning.cli import command_parser, run_command

# Imports inside functions: `experiments check` runs before every chapter, so each command imports only
# what it needs when it runs.


def _add_claims(sub) -> None:
    from experiments.claims import FINDINGS  # the standard library only

    p = sub.add_parser("claims", help="write the 'Claims at a glance' page from the chapters' findings")
    p.add_argument("--profile", required=True, help="the profile every finding must come from")
    p.add_argument("--findings", type=Path, default=FINDINGS, help=f"folder of findings (default {FINDINGS})")
    p.add_argument("--out", type=Path, default=Path("book/generated/claims.md"), help="the page to write")


def _add_execute(sub) -> None:
    p = sub.add_parser("execute", help="run a chapter with papermill into the book (written only once it ran to its end)")
    p.add_argument("notebook", type=Path, help="the chapter's .ipynb (make writes it from notebooks/NAME.py)")
    p.add_argument("--out", type=Path, required=True, help="the executed chapter, e.g. book/generated/NAME.ipynb")
    p.add_argument("--profile", required=True, help="the profile whose parameters it runs with")
    p.add_argument("--parameters", type=Path, required=True, help="the profile's YAML for this chapter")


def _add_check(sub) -> None:
    p = sub.add_parser("check", help="check a profile's YAML files (chapter parameters, learn.yaml, fetch.yaml)")
    p.add_argument("--profile", help="smoke, mini or paper (notebooks/profiles/PROFILE)")
    p.add_argument("--profile-dir", type=Path, help="a profile folder to check instead")


def parser() -> argparse.ArgumentParser:
    return command_parser("experiments", __doc__, (_add_claims, _add_execute, _add_check))


def cmd_claims(args) -> None:
    from experiments.claims import write_page

    print(f"claims page: {write_page(args.findings, args.out, args.profile)}")


def cmd_execute(args) -> int:
    from papermill.exceptions import PapermillExecutionError

    from experiments.execution import execute_chapter

    for what, path in (("notebook", args.notebook), ("--parameters", args.parameters)):
        if not path.is_file():
            raise FileNotFoundError(f"{what}: file not found: {path}")
    try:
        execute_chapter(args.notebook, args.out, args.profile, args.parameters)
    except PapermillExecutionError as error:  # a cell failed: its error, as papermill reports it
        print(f"experiments execute: {args.notebook.stem} failed in cell {error.exec_count}:\n{error}", file=sys.stderr)
        return 1
    except RuntimeError as error:  # the kernel died (killed, out of memory)
        print(f"experiments execute: {args.notebook.stem}: {error}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


def cmd_check(args) -> None:
    from experiments.parameters import PROFILES, check_profile_files

    if (args.profile is None) == (args.profile_dir is None):
        raise ValueError("check: give --profile or --profile-dir")
    if args.profile is not None and args.profile not in PROFILES:
        raise ValueError(f"--profile must be one of {', '.join(PROFILES)}; got {args.profile!r}")
    folder = args.profile_dir or Path("notebooks") / "profiles" / args.profile
    print(f"{len(check_profile_files(folder))} files of {folder} are well formed")


COMMANDS = {"claims": cmd_claims, "execute": cmd_execute, "check": cmd_check}


def main(argv: list[str] | None = None) -> int:
    """The `experiments` command (`unlearning.cli.run_command`)."""
    return run_command("experiments", lambda: parser(), COMMANDS, argv, without_torch=frozenset(COMMANDS))


if __name__ == "__main__":
    sys.exit(main())
