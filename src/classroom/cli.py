"""The classroom's command line: `classroom assignments` and `classroom grade`.

    classroom assignments --out build/assignments        # student notebooks, solutions, autograders
    classroom assignments --book book/generated/assignments --edition instructor   # the book's pages
    classroom grade --assignment A1 --submissions hand-ins/   # writes hand-ins/grades.csv

A user's mistake is one line on stderr and status 2; unreadable submissions make `grade` exit 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Imports inside functions: `classroom --help` answers without importing nbformat or the graders.


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a wrong option is one line (`-h` shows the usage) and exits with status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


def parser() -> argparse.ArgumentParser:
    top = _OneLineParser(prog="classroom", description=__doc__.split("\n\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    p = sub.add_parser("assignments", help="student notebooks, solutions and autograder bundles (or the book's pages)")
    p.add_argument("--out", type=Path, default=Path("build/assignments"),
                   help="folder for student/, solutions/, autograder/ (default build/assignments)")
    p.add_argument("--book", type=Path, help="write the book's assignment pages to this folder instead")
    p.add_argument("--edition", default="instructor", help="book pages: instructor (solutions folded) or student")
    p.add_argument("--student-book", type=Path,
                   help="copy book/ here as the student edition (student pages, no page sources or downloads)")
    p = sub.add_parser("grade", help="grade every submission (.ipynb or .py) in a folder; writes grades.csv")
    p.add_argument("--assignment", required=True, help="A1, A2, A3 or A4")
    p.add_argument("--submissions", type=Path, required=True, help="folder of submissions")
    p.add_argument("--out", type=Path, help="the CSV to write (default SUBMISSIONS/grades.csv)")
    return top


def cmd_assignments(args) -> int:
    from classroom import assignments

    if args.student_book is not None:
        print(f"student edition source: {assignments.write_student_book('book', args.student_book)}")
        return 0
    if args.book is not None:
        written = assignments.write_book_pages(args.book, args.edition)
    else:
        written = assignments.build(args.out)
    print(f"wrote {len(written)} files under {args.book or args.out}")
    return 0


def cmd_grade(args) -> int:
    from classroom.grading import exercises_of, grade_folder

    exercises_of(args.assignment)  # an unknown assignment is an error before anything is read
    if not args.submissions.is_dir():
        raise FileNotFoundError(f"--submissions: folder not found: {args.submissions}")
    for part in (args.out.parent, *args.out.parents) if args.out is not None else ():
        if part.exists():
            if not part.is_dir():
                raise ValueError(f"--out: not a folder: {part}")
            break
    csv_path, unreadable = grade_folder(args.submissions, args.assignment, args.out)
    print(f"grades: {csv_path}")
    for line in unreadable:
        print(f"classroom grade: unreadable submission: {line}", file=sys.stderr)
    return 1 if unreadable else 0


def main(argv: list[str] | None = None) -> int:
    """Run one command; its status: 0 done, 1 unreadable submissions, 2 a user's mistake (one line)."""
    try:
        args = parser().parse_args(argv)
    except SystemExit as done:  # -h, or a malformed command line (one line on stderr)
        return done.code or 0
    try:
        return {"assignments": cmd_assignments, "grade": cmd_grade}[args.command](args)
    except (ValueError, OSError) as error:  # a user's mistake (or a file system's refusal): one line
        print(f"classroom {args.command}: error: {str(error).replace(chr(10), ' ')}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
