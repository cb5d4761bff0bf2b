"""Classroom assignments that grade themselves: exercises, checks, grading, and the notebooks.

Students implement the library's functions under the library's names (`restricted_margin`,
`masc_loss`, `tau_from_rho`, `violation_rate`, `ViolationStop`, `combine`, `truth_ratio`,
`forget_quality`); `checks` says what each exercise verifies, `grading` grades submissions,
`assignments` turns the text sources in notebooks/assignments/ into student notebooks, solutions,
autograder bundles and book pages.
"""

from classroom.checks import EXERCISES
from classroom.grading import check

__all__ = ["EXERCISES", "check"]
