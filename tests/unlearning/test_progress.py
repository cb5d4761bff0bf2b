"""Progress bars (`unlearning.progress`): drawn on a terminal only, never in CI or a papermill kernel,
and `UNLEARNING_PROGRESS` decides over both."""

import pytest

from unlearning import progress


@pytest.mark.parametrize("environment, expected", [
    ({"UNLEARNING_PROGRESS": "0"}, False),
    ({"UNLEARNING_PROGRESS": "no"}, False),
    ({"UNLEARNING_PROGRESS": "1", "CI": "true"}, True),  # forced on, even in CI
    ({"CI": "true"}, False),
    ({"PAPERMILL_EXECUTION": "True"}, False),
])
def test_the_environment_decides_before_the_terminal(monkeypatch, environment, expected):
    for name in ("UNLEARNING_PROGRESS", "CI", "PAPERMILL_EXECUTION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert progress.interactive() is expected


def test_without_a_bar_the_iterable_comes_back_itself(monkeypatch):
    monkeypatch.setenv("UNLEARNING_PROGRESS", "0")
    items = [1, 2, 3]
    assert progress.progress(items, desc="x") is items
    monkeypatch.setenv("UNLEARNING_PROGRESS", "1")
    assert list(progress.progress(items, disable=True)) == items and progress.progress(items) is not items
