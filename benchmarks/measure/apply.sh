#!/usr/bin/env bash
# apply.sh OUT [DOC] [--dry-run]
#   Put the tables of a measurement run (OUT: the jobs' logs, e.g.
#   benchmarks/measure/out/full) into the documents of the checkout DOC (default: the
#   checkout holding this script), and copy the files the documents include
#   (head_to_head.md, the examples' figures, benchmarks/results).  Each table
#   replacement prints its diff; a refused one (header differs) prints FAILED, a job
#   not run prints SKIPPED, and the rest go on.  Prose is not touched: FIGURES.md lists
#   the numbers to edit by hand with the log line that gives them.  Not done here:
#   `python docs/tools/accepts_table.py --write` (run it in DOC: it regenerates the
#   user guide's "What each estimator accepts" itself).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: apply.sh OUT [DOC] [--dry-run]" >&2; exit 2; }
OUT=$(cd "$1" && pwd) || exit 2; shift
DOC=$HERE/../..; DRY=
for arg in "$@"; do
    case $arg in --dry-run) DRY=--dry-run ;; -*) echo "unknown option $arg" >&2; exit 2 ;;
                 *) DOC=$arg ;; esac
done
DOC=$(cd "$DOC" && pwd) || exit 2
PY=${PYTHON:-python}
fails=0
put() {  # put FILE ANCHOR SOURCE [put_table options]
    local f=$1 anchor=$2 src=$3; shift 3
    if [ ! -f "$src" ]; then echo "SKIPPED $f '$anchor': no $src"; return; fi
    echo "== $f '$anchor' <- ${src#"$OUT"/} $*"
    $PY "$HERE/put_table.py" "$DOC/$f" "$anchor" "$src" "$@" $DRY 2>&1 \
        || { echo "FAILED"; fails=$((fails + 1)); }
}
cp_() {  # cp_ SOURCE DEST (DEST relative to DOC)
    if [ ! -f "$1" ]; then echo "SKIPPED copy to $2: no $1"; return; fi
    if [ -n "$DRY" ]; then echo "would copy ${1#"$OUT"/} -> $2"
    elif [ "${2%.md}" != "$2" ]; then  # (a table: its command without the run's OUT)
        sed -E 's/ --output-dir [^ `]+//' "$1" > "$DOC/$2" && echo "copied ${1#"$OUT"/} -> $2"
    else cp "$1" "$DOC/$2" && echo "copied ${1#"$OUT"/} -> $2"; fi
}
R=$OUT/results
fit=$R/bench_fit.md; [ -f "$fit" ] || fit=$R/bench_fit_smoke.md
for case in vmf memory; do
    [ -f "$OUT/cosine_$case.log" ] && $PY "$HERE/cosine_readme.py" $case \
        "$OUT/cosine_$case.log" --out "$R/${case}_table.md" > /dev/null
done

# README.md
put README.md '## Head-to-head' "$OUT/h2h/readme_table.md"
put README.md '## Hard cases' "$OUT/hard_one.log" --section '### one-start' --nth 1
put README.md '## Hard cases' "$OUT/hard_many.log" --section '### many' --nth 2
put README.md '## Hard cases' "$OUT/hard_overlap.log" --section '### overlap' --nth 3
put README.md '## Speed' "$fit" --drop 'MiniBatchKMeans'
# benchmarks/README.md
B=benchmarks/README.md
put $B '## Results' "$fit"
put $B '## Cost per iteration' "$OUT/pass.log" --nth 2 --from-nth 1
put $B '## Many clusters and vector quantization' "$R/grid_table.md"
put $B '## Wide data' "$R/wide_wall/bench_wide.md"
put $B '## One risk evaluation against n' "$R/bench_risk.md"
put $B '## The cosine layer on sparse text' "$R/memory_table.md"
put $B '## The cosine layer on von Mises-Fisher' "$R/vmf_table.md" --nth 1
# docs/user_guide.md
put docs/user_guide.md 'Measured by `python benchmarks/in_context_table.py`' \
    "$OUT/in_context.log" --keep-labels
put docs/user_guide.md 'Measured (`python benchmarks/bench_learn.py' "$OUT/learn.log" \
    --from-nth 1 \
    --columns 'K;d;weights;learn;GaussianMixture (converged);default temperature;KMeans'
# files the documents include or the repository keeps
cp_ "$OUT/h2h/head_to_head.md" docs/_static/head_to_head.md
cp_ "$OUT/h2h/head_to_head.png" docs/_static/head_to_head.png
for f in convergence:plot_convergence ablation:ablation_table \
         three_clusters_sigma:three_clusters three_clusters_plane:three_clusters \
         risk_ratios:risk_ratios embedding_2d:plot_embedding_2d point_2d:plot_point_2d \
         choose_k:plot_choose_k text_clusters:plot_text_clusters grid_search:grid_search; do
    cp_ "$OUT/examples/${f#*:}/${f%%:*}.png" "docs/_static/${f%%:*}.png"
done
for f in bench_fit.md bench_fit.png bench_risk.md bench_wide.md; do
    cp_ "$R/$f" "benchmarks/results/$f"
done
# benchmarks/results/bench_direction.md is a history (the latest run, then the runs
# before it): not copied over, edited by hand.
[ -f "$R/bench_direction.md" ] && echo "HAND: benchmarks/results/bench_direction.md:" \
    "put ${R#"$OUT"/}/bench_direction.md's table under a new '## Latest' section," \
    "the old one renamed '## Before'"
echo "apply.sh: $fails table(s) refused"
[ "$fails" = 0 ]
