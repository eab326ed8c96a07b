#!/usr/bin/env bash
# The GPU steps of issue "Speed at the limit", in the order to run them on a
# lent GPU (each device call is limited to 10 minutes; the results store makes
# every step resumable, so rerun the same line until it reports all points
# reused, carrying results/paper back between calls).
#
#   1. checks and benchmarks (about 5 minutes on an H100):
#        python benchmarks/gpu_check.py --out benchmarks/results/gpu_check.json
#   2. paper scale, Figure 2(a) first (widths 20-2000, the 9 x 10 lr x wd grid, 800 epochs):
#        timeout 540 python -m resnetlearn reproduce fig2a --scale paper --device cuda --out results/paper
#      then fig2b, fig3, companion, fig4, thm3 the same way.
#
# With no argument this script runs step 1 and then as much of step 2 as fits
# in $BUDGET seconds (default 540), stopping cleanly (Ctrl-C semantics: no
# partial point stored) so the next call resumes.
set -uo pipefail
cd "$(dirname "$0")/.."
BUDGET=${BUDGET:-540}
start=$(date +%s)
if [ "${SKIP_CHECK:-0}" != 1 ]; then
  python benchmarks/gpu_check.py --out benchmarks/results/gpu_check.json || exit 1
fi
for fig in fig2a fig2b fig3 companion fig4 thm3; do
  left=$(( BUDGET - ($(date +%s) - start) ))
  [ "$left" -gt 30 ] || break
  /usr/bin/time -f "$fig: %e s wall" timeout -s INT "$left" \
    python -m resnetlearn reproduce "$fig" --scale paper --device cuda --out results/paper
done
