"""When each step of a build ran, from the Makefile's timeline (build/timeline-PROFILE.tsv: one
"<unix time>\\tstart|end\\t<step>" line as a chapter, a part of the learning stage or an HTML build
starts and ends), as a Markdown table and the time the build ran 0, 1 or 2+ steps at once.

    python perf/timeline.py build/timeline-smoke.tsv      # after make book PROFILE=smoke

A step that ran several times (make book again) counts with its last run. A step runs one torch
thread, except the learning stage's parts (`--jobs` workers each).
"""

from __future__ import annotations

import sys
from pathlib import Path


def read_steps(path: Path) -> dict[str, tuple[float, float]]:
    """Each step's last (start, end) in unix seconds; a step that started and never ended is left out."""
    started, steps = {}, {}
    for line in path.read_text().splitlines():
        when, kind, step = line.split("\t")
        if kind == "start":
            started[step] = float(when)
        elif step in started:
            steps[step] = (started.pop(step), float(when))
    return dict(sorted(steps.items(), key=lambda item: item[1][0]))


def concurrency(steps: dict[str, tuple[float, float]]) -> dict[int, float]:
    """Seconds of the build's span during which 0, 1, 2, ... steps ran at once."""
    events = sorted([(start, 1) for start, _ in steps.values()] + [(end, -1) for _, end in steps.values()])
    seconds, running, last = {}, 0, events[0][0]
    for when, change in events:
        seconds[running] = seconds.get(running, 0.0) + when - last
        running, last = running + change, when
    return seconds


def report(steps: dict[str, tuple[float, float]]) -> str:
    """The Markdown table of the steps (offsets from the first start) and the concurrency line."""
    origin = min(start for start, _ in steps.values())
    span = max(end for _, end in steps.values()) - origin
    rows = ["| step | start (s) | end (s) | seconds |", "| --- | ---: | ---: | ---: |"]
    rows += [f"| {step} | {start - origin:.0f} | {end - origin:.0f} | {end - start:.0f} |"
             for step, (start, end) in steps.items()]
    shares = concurrency(steps)
    at_once = ", ".join(f"{n if n < 2 else '2+'} steps {seconds / span:.0%}" for n, seconds in _bucket(shares).items())
    return "\n".join(rows) + f"\n\nspan {span:.0f} s; running at once: {at_once}\n"


def _bucket(shares: dict[int, float]) -> dict[int, float]:
    out = {0: 0.0, 1: 0.0, 2: 0.0}
    for n, seconds in shares.items():
        out[min(n, 2)] += seconds
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python perf/timeline.py build/timeline-PROFILE.tsv")
    found = read_steps(Path(sys.argv[1]))
    if not found:
        sys.exit(f"{sys.argv[1]}: no step started and ended")
    print(report(found), end="")
