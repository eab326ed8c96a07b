#!/usr/bin/env bash
# The GPU steps, in the order to run them on a lent GPU (each device call is
# limited to 10 minutes; the results store makes every step resumable, so rerun
# the same line until it reports all points reused, carrying results/<scale>
# back between calls).
#
#   1. checks and benchmarks (about 5 minutes on an H100; CHECK=quick: about a minute), then the live
#      race headless at m = 200 and 1000:
#        python gpu/gpu_check.py [--quick] --out gpu/results/gpu_check.json
#        python benchmarks/race_headless.py --json benchmarks/results/race_headless_gpu.json
#   2. the figures at SCALE (default paper: widths 20-2000, Figure 4 to 100000, the 11 x 14 lr x wd grid,
#      800 epochs):
#        timeout -s INT 540 python -m resnetlearn reproduce fig2a --scale paper --out results/paper --into-shipped --workers 6
#      then the other FIGURES the same way.
#
# With no argument this script runs step 1 and then as much of step 2 as fits
# in $BUDGET seconds (default 540), stopping cleanly (Ctrl-C semantics: no
# partial point stored) so the next call resumes. Where $OUT is set (the device
# tool), the check's JSON and a tarball of results/<scale> are copied there
# after every figure, so a call stopped at its limit still brings back what is done.
#
#   SCALE=cpu FIGURES="fig2a fig2b companion thm3" CHECK=quick bash gpu/gpu_paper_scale.sh
#
# Memory: each of the WORKERS points running at once on the GPU plans with 1/WORKERS of its memory
# (resnetlearn.memory.share_device); a network point whose lr x wd grid does not fit in that trains it in
# the fewest chunks that fit (one size but the last), and says so ("training 90 models in 2 chunks of <= 45
# (memory)"); the two-layer networks' numbers do not depend on the chunks, the 3resnet's only in float32 rounding. fig4b's points (90 models on N = 50000 each) fill a GPU alone, so fig4b runs with
# FIG4B_WORKERS (default 1): on an H100 its m = 1000 and 2000 points then train in 2 and 4 chunks instead of
# 10 and 23 (python gpu/memory_chunks.py prints the plan for any figure, GPU size and worker count).
#
# A point longer than one call (Figure 4(a) at the widest m, 4(b)) never finishes inside a call on its own:
# CHECKPOINT_MODELS=K trains at most K models of a grid at once and keeps each finished group in the store
# (results/<scale>/store/<figure>/<key>.partial/, carried back in the tarball), so the next call goes on from there.
#
# The device is left to the default (the GPU when present), so the stored points
# have the same keys as a CPU run of the same scale: tables can be rewritten from
# the store on any machine; every row records the device that computed it.
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-540}
SCALE=${SCALE:-paper}
# fig4b (arXiv v3 §8.2, Figure 4(b): d = 100, N = 50000, mini-batch 100) is defined at paper scale only:
# at another SCALE the command refuses it at once (exit 2, naming its scales) and the loop goes on.
FIGURES=${FIGURES:-fig2a fig2b fig3 companion thm3 fig4 fig4b}
WORKERS=${WORKERS:-6}
FIG4B_WORKERS=${FIG4B_WORKERS:-1}
CHECK=${CHECK:-full}
CHECKPOINT_MODELS=${CHECKPOINT_MODELS:-}
groups=(); [ -n "$CHECKPOINT_MODELS" ] && groups=(--checkpoint-models "$CHECKPOINT_MODELS")
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
start=$(date +%s)
save() {
  [ -n "${OUT:-}" ] || return 0
  cp gpu/results/gpu_check.json benchmarks/results/race_headless_gpu.json "$OUT/" 2>/dev/null
  [ -d "results/${SCALE}" ] || return 0  # nothing computed at this scale yet (the first save, before any figure)
  tar czf "$OUT/results_${SCALE}.tgz" "results/${SCALE}"
}
case "$CHECK" in
  full) python gpu/gpu_check.py --out gpu/results/gpu_check.json || exit 1 ;;
  quick) python gpu/gpu_check.py --quick --out gpu/results/gpu_check.json || exit 1 ;;
esac
python benchmarks/race_headless.py --json benchmarks/results/race_headless_gpu.json  # the live race, ~1 min
save
for fig in $FIGURES; do
  left=$(( BUDGET - ($(date +%s) - start) ))
  [ "$left" -gt 30 ] || break
  t0=$(date +%s)
  workers=$WORKERS; [ "$fig" = fig4b ] && workers=$FIG4B_WORKERS
  timeout -s INT -k 30 "$left" \
    python -m resnetlearn reproduce "$fig" --scale "$SCALE" --out "results/${SCALE}" --into-shipped --workers "$workers" \
    ${groups[@]+"${groups[@]}"}
  echo "$fig: exit $?, $(( $(date +%s) - t0 )) s wall"
  save
done
