#!/usr/bin/env bash
# What a new user meets: a fresh clone of this checkout's HEAD, then `make book` (default profile) or
# `bash .ci/run` (the README's `make test`), timed, with the disk the clone then holds. Writes its
# section of perf/fresh-clone.md (dated, with the commit and the machine) in this checkout.
#   bash perf/fresh_clone.sh book     # about an hour on 2 cores
#   bash perf/fresh_clone.sh test     # about a quarter of an hour
# The section gives the phases, the share of the cores kept busy and the timeline of the book's steps.
# Run nothing else on the machine meanwhile: two jobs on two cores slow each other down.
set -euo pipefail
what=${1:?usage: fresh_clone.sh book|test}
case "$what" in book) command="make book" ;; test) command="bash .ci/run" ;; *) echo "book or test" >&2; exit 2 ;; esac
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/fresh-clone.XXXXXX)
git clone -q "$repo" "$work/clone"
cd "$work/clone"
commit=$(git rev-parse --short HEAD)
# the machine's busy and total CPU time (jiffies, every core) before and after: the share of the cores'
# time the command kept busy
cpu_times() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
read -r busy0 total0 < <(cpu_times)
start=$(date +%s)
status=0
$command > "$work/$what.log" 2>&1 || status=$?
seconds=$(( $(date +%s) - start ))
read -r busy1 total1 < <(cpu_times)
busy=$(( 100 * (busy1 - busy0) / (total1 - total0) ))
timeline=$(ls build/timeline-*.tsv 2>/dev/null | head -1 || true)
steps=$([ -n "$timeline" ] && python3 "$repo/perf/timeline.py" "$timeline" || true)
disk=$(du -sh --apparent-size . | cut -f1)
phases=$(grep -E "^phase done:" "$work/$what.log" | sed 's/^phase done: /  - /' || true)
results="$repo/perf/fresh-clone.md"
[ -f "$results" ] || printf '# A fresh clone, measured\n\nWritten by `perf/fresh_clone.sh`; each section is replaced when it runs again.\n' > "$results"
section="## \`$command\` from a fresh clone"
body=$(printf '%s\n\n- date: %s\n- commit: %s\n- machine: %s, %s CPUs\n- status: %s\n- wall time: %d min %02d s\n- cores busy: %s %% of the wall time (all cores, /proc/stat)\n- disk the clone holds afterwards (environment included): %s\n%s\n%s\n' \
  "$section" "$(date -u +%Y-%m-%dT%H:%MZ)" "$commit" "$(uname -m)" "$(getconf _NPROCESSORS_ONLN)" "$status" $((seconds / 60)) \
  $((seconds % 60)) "$busy" "$disk" "${phases:+- phases:
$phases}" "${steps:+
Timeline of the steps of the book (\`$timeline\`, \`perf/timeline.py\`):

$steps}")
python3 - "$results" "$section" "$body" <<'PY'
import sys
path, section, body = sys.argv[1:]
text = open(path).read()
parts = text.split("\n## ")
head, sections = parts[0], ["## " + p for p in parts[1:]]
sections = [s for s in sections if not s.startswith(section)] + [body]
open(path, "w").write("\n\n".join([head.rstrip("\n")] + [s.rstrip("\n") for s in sections]) + "\n")
PY
echo "$command: status $status in ${seconds}s, $disk; log in $work/$what.log; results in $results"
exit $status
