#!/usr/bin/env bash
# Side by side in one job: bench_training.py (engine vs plain) and bench_kernels.py of two commits,
# alternated BEFORE, AFTER, BEFORE, AFTER so that a change in machine load hits both alike.
# Each commit runs its own copy of the scripts and package (git worktree, PYTHONPATH=that tree).
#
#   bash benchmarks/bench_before_after.sh BEFORE_REF [AFTER_REF] [OUT_DIR]
#
# Writes OUT_DIR/{training,kernels}_{before,after}_{1,2}.json (default OUT_DIR: /tmp/bench_before_after).
set -euo pipefail
before=${1:?usage: bench_before_after.sh BEFORE_REF [AFTER_REF] [OUT_DIR]}
after=${2:-HEAD}
out=${3:-/tmp/bench_before_after}
repo=$(git rev-parse --show-toplevel)
py=${PYTHON:-python}
trees=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$trees/before" 2>/dev/null || true;
      git -C "$repo" worktree remove --force "$trees/after" 2>/dev/null || true; rm -rf "$trees"' EXIT
git -C "$repo" worktree add --detach "$trees/before" "$before" >/dev/null
git -C "$repo" worktree add --detach "$trees/after" "$after" >/dev/null
mkdir -p "$out"
for rep in 1 2; do
  for which in before after; do
    tree=$trees/$which
    echo "== $which ($(git -C "$tree" rev-parse --short HEAD)) repetition $rep: bench_training"
    (cd "$tree" && PYTHONPATH="$tree" "$py" benchmarks/bench_training.py --no-sequential --repeats 2 \
        --json "$out/training_${which}_${rep}.json" | tail -n 4)
    echo "== $which repetition $rep: bench_kernels"
    (cd "$tree" && PYTHONPATH="$tree" "$py" benchmarks/bench_kernels.py \
        --json "$out/kernels_${which}_${rep}.json" | tail -n 12)
  done
done
echo "before = $(git -C "$repo" rev-parse --short "$before"), after = $(git -C "$repo" rev-parse --short "$after")"
