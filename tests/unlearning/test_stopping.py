"""The two-stage violation rule and the fixed budget, driven by scripted probes."""

import pytest

from unlearning.stopping import FixedBudget, ViolationStop


class ScriptedProbe:
    """Returns rates from a table keyed by probe size, recording every call."""

    def __init__(self, rates):
        self.rates, self.calls = rates, []

    def __call__(self, n):
        self.calls.append(n)
        return self.rates[n]


def test_no_probe_between_intervals():
    probe = ScriptedProbe({4: 0.0, 32: 0.0})
    rule = ViolationStop(tolerance=0.5, every=2)
    assert rule.update(1, probe) is False and probe.calls == []
    assert rule.update(2, probe) is True and probe.calls == [4, 32]


def test_trigger_above_tolerance_skips_confirmation():
    probe = ScriptedProbe({4: 0.6, 32: 0.0})
    assert ViolationStop(tolerance=0.5).update(2, probe) is False
    assert probe.calls == [4]


def test_confirmation_can_veto_and_boundary_is_non_strict():
    probe = ScriptedProbe({4: 0.5, 32: 0.51})
    rule = ViolationStop(tolerance=0.5, trigger_size=4, confirm_size=32)
    assert rule.update(4, probe) is False and probe.calls == [4, 32]
    probe.rates[32] = 0.5
    assert rule.update(6, probe) is True
    assert rule.history == [(4, "trigger", 4, 0.5), (4, "confirm", 32, 0.51), (6, "trigger", 4, 0.5), (6, "confirm", 32, 0.5)]


def test_fixed_budget():
    rule = FixedBudget(3)
    assert [rule.update(s) for s in (1, 2, 3)] == [False, False, True]


@pytest.mark.parametrize("kwargs,name", [
    ({"tolerance": -0.1}, "tolerance"), ({"tolerance": 1.1}, "tolerance"),
    ({"tolerance": 0.5, "every": 0}, "every"), ({"tolerance": 0.5, "trigger_size": 0}, "trigger_size"),
    ({"tolerance": 0.5, "confirm_size": 0}, "confirm_size"),
])
def test_violation_stop_rejects_bad_arguments(kwargs, name):
    with pytest.raises(ValueError, match=name):
        ViolationStop(**kwargs)


def test_fixed_budget_rejects_zero():
    with pytest.raises(ValueError, match="max_steps"):
        FixedBudget(0)
