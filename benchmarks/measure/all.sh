#!/usr/bin/env bash
# all.sh   run the measurement jobs one at a time on the checkout this script belongs
# to (its kernel built: python setup.py -q build_ext --inplace).  SMOKE=1: tiny sizes.
#   JOBS="fit pass" benchmarks/measure/all.sh    only those
#   LONG=1 ...    also the long prose-only jobs (hard_one4 hard_more learn_1t: ~15 min)
#   EXTRA=1 ...   also the extra jobs no current text needs re-measured (grid_vq
#                 wide_wall dask_large)
# Writes OUT/all.log (each job's seconds and failures) beside the jobs' logs; OUT as in
# measure.sh (default benchmarks/measure/out/full, out/smoke with SMOKE=1).
# Order: a fast check first (fails early on a broken tree), then the timed jobs while
# the machine is as quiet as it will be (the headline speed tables first), then the
# quality jobs, whose figures do not depend on the load.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SMOKE=${SMOKE:-0}
if [ "$SMOKE" = 1 ]; then OUT=${OUT:-$HERE/out/smoke}; else OUT=${OUT:-$HERE/out/full}; fi
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
mkdir -p "$OUT"
export OUT SMOKE
DEFAULT="cli fit pass grid step risk wide direction dask stream cosine_vmf cosine_text \
cosine_memory cosine_dense sparse_point learn learn_cosine bic_spreads in_context \
direction_table usage accepts local_optima h2h hard_one hard_many hard_overlap examples \
cosine_temperature"
LONGS="learn_1t hard_one4 hard_more"
EXTRAS="grid_vq wide_wall dask_large"
if [ "$SMOKE" = 1 ]; then DEFAULT="$DEFAULT $LONGS"; fi   # the smoke checks every job
JOBS=${JOBS:-$DEFAULT}
[ "${LONG:-0}" = 1 ] && [ "$SMOKE" != 1 ] && JOBS="$JOBS $LONGS"
[ "${EXTRA:-0}" = 1 ] && JOBS="$JOBS $EXTRAS"
{ echo "# all.sh $(date -u '+%F %T UTC') in ${TREE:-$HERE/../..}" \
       "at $(git -C "${TREE:-$HERE}" rev-parse --short HEAD) SMOKE=$SMOKE"
  echo "# jobs: $JOBS"; } > "$OUT/all.log"
T0=$(date +%s)
for j in $JOBS; do
    "$HERE/measure.sh" "$j" | tee -a "$OUT/all.log"
done
failed=$(grep -l '^# exit [^0]' "$OUT"/*.log 2>/dev/null | xargs -r -n1 basename | tr '\n' ' ')
echo "# total $(( ($(date +%s) - T0) / 60 )) min; failed jobs: ${failed:-none}" \
    | tee -a "$OUT/all.log"
