"""Helpers shared by the tests (importable: pytest puts this folder on sys.path)."""


def without_cost(value):
    """A record or metrics dict without what may differ between equal runs: seconds and memory peaks."""
    if isinstance(value, dict):
        return {k: without_cost(v) for k, v in value.items() if "seconds" not in k and not k.startswith("peak_")}
    if isinstance(value, list):
        return [without_cost(v) for v in value]
    return value
