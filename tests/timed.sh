#!/usr/bin/env bash
# Run one phase of `make test` and time it: `tests/timed.sh FILE NAME COMMAND...` runs COMMAND,
# prints "NAME: N s" and appends the same line to FILE (make test prints FILE at its end), and
# exits with COMMAND's status.
file=$1 name=$2
shift 2
start=$(date +%s)
"$@"
status=$?
line=$(printf '%-34s %4d s%s' "$name" $(( $(date +%s) - start )) "$([ $status = 0 ] || echo "  (failed, status $status)")")
mkdir -p "$(dirname "$file")"
echo "$line" >> "$file"
echo "phase done: $line"
exit $status
