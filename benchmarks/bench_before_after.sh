#!/usr/bin/env bash
# Side by side in one job: bench_training.py (engine vs plain) and bench_kernels.py of two commits,
# alternated BEFORE, AFTER, BEFORE, AFTER so that a change in machine load hits both alike.
# Each commit runs its own copy of the scripts and package (git worktree, PYTHONPATH=that tree).
#
#   bash benchmarks/bench_before_after.sh BEFORE_REF [AFTER_REF] [OUT_DIR]
#   BENCHES="kernels" REPS=3 bash benchmarks/bench_before_after.sh BEFORE_REF   # one benchmark, three rounds
#
# Writes OUT_DIR/BENCH_{before,after}_REP.json (default OUT_DIR: /tmp/bench_before_after).
set -euo pipefail
before=${1:?usage: bench_before_after.sh BEFORE_REF [AFTER_REF] [OUT_DIR]}
after=${2:-HEAD}
out=${3:-/tmp/bench_before_after}
repo=$(git rev-parse --show-toplevel)
py=${PYTHON:-python}
benches=${BENCHES:-training kernels}
reps=${REPS:-2}
trees=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$trees/before" 2>/dev/null || true;
      git -C "$repo" worktree remove --force "$trees/after" 2>/dev/null || true; rm -rf "$trees"' EXIT
git -C "$repo" worktree add --detach "$trees/before" "$before" >/dev/null
git -C "$repo" worktree add --detach "$trees/after" "$after" >/dev/null
mkdir -p "$out"
for rep in $(seq "$reps"); do
  for which in before after; do
    tree=$trees/$which
    for bench in $benches; do
      echo "== $which ($(git -C "$tree" rev-parse --short HEAD)) repetition $rep: bench_$bench"
      case $bench in
        training) args=(--no-sequential --repeats 2) ;;
        kernels) args=() ;;
        *) echo "unknown benchmark $bench (allowed: training kernels)" >&2; exit 2 ;;
      esac
      (cd "$tree" && PYTHONPATH="$tree" "$py" "benchmarks/bench_$bench.py" "${args[@]}" \
          --json "$out/${bench}_${which}_${rep}.json" | tail -n 12)
    done
  done
done
echo "before = $(git -C "$repo" rev-parse --short "$before"), after = $(git -C "$repo" rev-parse --short "$after")"
