#!/usr/bin/env bash
# apply.sh OUT [DOC] [--dry-run]
#   Put the tables of a measurement run (OUT: the jobs' logs, e.g.
#   benchmarks/measure/out/full) into the documents of the checkout DOC (default: the
#   checkout holding this script), and copy the files the documents include
#   (head_to_head.md, the examples' figures, benchmarks/results).  Each table
#   replacement prints its diff; a refused one (header differs) prints FAILED, a job
#   not run prints SKIPPED, and the rest go on.  A table or file whose job's log
#   (OUT/JOB.log) is unfinished (no '# end' line after its last '# exit' line: the
#   job still running, or killed) or records a failed command ('# exit' not 0) is
#   refused too, naming the log: REFUSED.  Prose is not touched: FIGURES.md lists
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
log_of() {  # log_of SOURCE: the log of the job that wrote SOURCE (a log: itself)
    case ${1#"$OUT"/} in
        *.log) echo "$1" ;;
        h2h/*) echo "$OUT/h2h.log" ;;
        examples/*) echo "$OUT/examples.log" ;;
        results/bench_fit*) echo "$OUT/fit.log" ;;
        results/grid_table.md) echo "$OUT/grid.log" ;;
        results/wide_wall/*) echo "$OUT/wide_wall.log" ;;
        results/bench_wide.md) echo "$OUT/wide.log" ;;
        results/bench_risk.md) echo "$OUT/risk.log" ;;
        results/bench_direction.md) echo "$OUT/direction.log" ;;
        results/memory_table.md) echo "$OUT/cosine_memory.log" ;;
        results/vmf_table.md) echo "$OUT/cosine_vmf.log" ;;
        *) echo "$OUT/(no job known for ${1#"$OUT"/}).log" ;;
    esac
}
unfinished() {  # unfinished LOG: why LOG's table must not be taken (nothing: it may)
    # measure.sh writes '# exit N' after each command and '# end ...' after the last
    local last_exit end
    [ -f "$1" ] || { echo "no log $1"; return; }
    last_exit=$(grep -n '^# exit ' "$1" | tail -1 | cut -d: -f1)
    end=$(grep -n '^# end ' "$1" | tail -1 | cut -d: -f1)
    if [ -z "$last_exit" ] || [ -z "$end" ] || [ "$end" -lt "$last_exit" ]; then
        echo "$1 is unfinished (no '# end' line after its last '# exit' line:" \
             "the job still running, or stopped)"
    elif grep -q '^# exit [^0]' "$1"; then
        echo "$1 records a failed command ($(grep -m1 '^# exit [^0]' "$1"))"
    fi
}
refused() {  # refused SOURCE WHAT: prints REFUSED and counts it if SOURCE's log is not done
    local why
    why=$(unfinished "$(log_of "$1")")
    [ -z "$why" ] && return 1
    echo "REFUSED $2: $why"; fails=$((fails + 1))
}
put() {  # put FILE ANCHOR SOURCE [put_table options]
    local f=$1 anchor=$2 src=$3; shift 3
    if [ ! -f "$src" ]; then echo "SKIPPED $f '$anchor': no $src"; return; fi
    refused "$src" "$f '$anchor'" && return
    echo "== $f '$anchor' <- ${src#"$OUT"/} $*"
    $PY "$HERE/put_table.py" "$DOC/$f" "$anchor" "$src" "$@" $DRY 2>&1 \
        || { echo "FAILED"; fails=$((fails + 1)); }
}
cp_() {  # cp_ SOURCE DEST (DEST relative to DOC)
    if [ ! -f "$1" ]; then echo "SKIPPED copy to $2: no $1"; return; fi
    refused "$1" "copy to $2" && return
    if [ -n "$DRY" ]; then echo "would copy ${1#"$OUT"/} -> $2"
    elif [ "${2%.md}" != "$2" ]; then  # (a table: its command without the run's OUT)
        sed -E 's/ --output-dir [^ `]+//' "$1" > "$DOC/$2" && echo "copied ${1#"$OUT"/} -> $2"
    else cp "$1" "$DOC/$2" && echo "copied ${1#"$OUT"/} -> $2"; fi
}
R=$OUT/results
fit=$R/bench_fit.md; [ -f "$fit" ] || fit=$R/bench_fit_smoke.md
for case in vmf memory; do  # (a log not done: its table is refused below)
    log=$OUT/cosine_$case.log
    [ -f "$log" ] && [ -z "$(unfinished "$log")" ] && $PY "$HERE/cosine_readme.py" $case \
        "$log" --out "$R/${case}_table.md" > /dev/null
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
H=benchmarks/results/bench_direction.md
[ -f "$R/bench_direction.md" ] && ! refused "$R/bench_direction.md" "HAND $H" \
    && echo "HAND: $H: put ${R#"$OUT"/}/bench_direction.md's table under a new" \
    "'## Latest' section, the old one renamed '## Before'"
echo "apply.sh: $fails table(s) or file(s) refused"
[ "$fails" = 0 ]
