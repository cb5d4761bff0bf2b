"""One `make` at a time in a checkout: run a command while holding an exclusive lock on a file.

`python3 src/experiments/makelock.py LOCKFILE COMMAND...` takes an exclusive `flock` on LOCKFILE
(waiting, with one line saying for whom, while another process holds it), runs COMMAND with
`UNLEARNING_MAKE_LOCK=1` in its environment (so the makes it starts do not lock again) and exits
with COMMAND's status. The Makefile runs every goal that writes (book, notebooks, models, test,
...) through it: a second `make book` started while one runs waits, then finds done what the
first did, instead of writing the same executed notebooks and HTML at the same time. The lock
goes with the process, so a killed make never leaves a stale lock behind.

Standard library only: it runs with the system Python before the virtual environment exists.
Where `fcntl` is missing (Windows), the command runs unlocked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def run_locked(lock_path: str, command: list[str]) -> int:
    """Run `command` while holding the lock on `lock_path`; its exit status."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock on this platform
        return subprocess.call(command)
    os.makedirs(os.path.dirname(lock_path) or ".", exist_ok=True)
    with open(lock_path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            print(f"make: waiting for the make already running in this checkout ({holder}) ...",
                  file=sys.stderr, flush=True)
            start = time.monotonic()
            fcntl.flock(handle, fcntl.LOCK_EX)
            print(f"make: it finished after {time.monotonic() - start:.0f} s; going on", file=sys.stderr, flush=True)
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}: {' '.join(command[1:]) or command[0]}\n")
        handle.flush()
        child = subprocess.Popen(command, env={**os.environ, "UNLEARNING_MAKE_LOCK": "1"})
        # Ctrl-C reaches the child make from the terminal, and make cleans up after itself: wait for it
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        return child.wait()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: makelock.py LOCKFILE COMMAND...", file=sys.stderr)
        return 2
    return run_locked(argv[0], argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
