#!/usr/bin/env bash
# measure.sh JOB...   re-measure the figures of README.md, docs/*.md and
# benchmarks/README.md on the checkout this script belongs to.
#
#   benchmarks/measure/measure.sh fit pass          # two jobs
#   benchmarks/measure/measure.sh --list            # the jobs, with their commands
#   SMOKE=1 benchmarks/measure/measure.sh fit       # tiny sizes: checks the job runs
#
# Build the kernel first (python setup.py -q build_ext --inplace).  The jobs run in the
# checkout's root with PYTHONPATH set to it, so its package shadows any installed one.
# Each job writes OUT/JOB.log: the commands as run, the commit (and whether the tree
# is dirty), `date -u` before and after, the load average, the kernel line of
# show_versions(), then each command's output with its wall and CPU time and exit
# code.  Files the scripts write (tables, figures) go to OUT/results and OUT/JOB/,
# never into the checkout.  FIGURES.md says which document lines each job feeds;
# apply.sh puts the tables in.
# Environment: OUT (default benchmarks/measure/out/full, or out/smoke with SMOKE=1),
# SMOKE, TREE (the checkout to measure; default the one holding this script), VENV (a
# virtualenv to activate; default: the python on PATH).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "${TREE:-$HERE/../..}" && pwd) || exit 2
SMOKE=${SMOKE:-0}
if [ "$SMOKE" = 1 ]; then OUT=${OUT:-$HERE/out/smoke}; else OUT=${OUT:-$HERE/out/full}; fi
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
RES=$OUT/results
M=$HERE
[ -n "${VENV:-}" ] && source "$VENV/bin/activate"
ONE="OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 taskset -c 0"

# ---- the jobs: "JOB full|smoke|both COMMAND", one command a line ----
# A job's lines run one after the other into the same log: its "full" and "both"
# lines, or with SMOKE=1 its "smoke" and "both" lines.  A backslash continues a line.
jobs_def() {
cat <<EOF
fit full python benchmarks/bench_fit.py --large --repeat 9 --output-dir $RES
fit smoke python benchmarks/bench_fit.py --smoke --output-dir $RES
pass full python benchmarks/bench_pass.py --parts
pass smoke python benchmarks/bench_pass.py --small --repeat 1 --parts
pass full python benchmarks/bench_pass.py
pass smoke python benchmarks/bench_pass.py --small --repeat 1
grid full python benchmarks/bench_grid.py --quick --cpus 1 --repeat 3 --output-dir $RES
grid full python $M/grid_readme.py $RES/bench_grid_quick.md --out $RES/grid_table.md
grid smoke python benchmarks/bench_grid.py --smoke --cpus 1 --repeat 1 --output-dir $RES
grid smoke python $M/grid_readme.py $RES/bench_grid_smoke.md --out $RES/grid_table.md
step full $ONE python benchmarks/bench_step.py
step smoke $ONE python benchmarks/bench_step.py --steps 10 --runs 2 --repeat 1
risk full python benchmarks/bench_risk.py --output-dir $RES
risk smoke python benchmarks/bench_risk.py --smoke --repeat 2 --output-dir $RES
wide full python benchmarks/bench_wide.py --d 10000 --n 1000 --repeat 5 --budget 30 --cpu \
--output-dir $RES
wide full python benchmarks/bench_wide.py --cpu --d 10000 --n 3000 --repeat 3 --budget 60 \
--output-dir $RES/wide3000
wide smoke python benchmarks/bench_wide.py --smoke --cpu --output-dir $RES
direction full python benchmarks/bench_direction.py --output-dir $RES
direction smoke python benchmarks/bench_direction.py --smoke --output-dir $RES
dask full python benchmarks/bench_dask.py
dask smoke python benchmarks/bench_dask.py --smoke
stream full $ONE python benchmarks/bench_stream.py --seeds 3 --out $RES/bench_stream.md
stream smoke $ONE python benchmarks/bench_stream.py --smoke --out $RES/bench_stream.md
cosine_vmf full python benchmarks/bench_cosine.py --case vmf --threads 1 --repeats 5
cosine_vmf smoke python benchmarks/bench_cosine.py --case vmf --threads 1 --repeats 1 \
--seeds 1 --n-per 50
cosine_text full python benchmarks/bench_cosine.py --case text --seeds 30
cosine_text smoke python benchmarks/bench_cosine.py --case text --seeds 1
cosine_memory full python benchmarks/bench_cosine.py --case memory
cosine_memory smoke python benchmarks/bench_cosine.py --case memory --n 3000 --d 2000 --K 5
cosine_dense full python benchmarks/bench_cosine.py --case dense --seeds 2 --threads 1
cosine_dense smoke python benchmarks/bench_cosine.py --case dense --seeds 1 --threads 1 \
--n 2000
sparse_point full taskset -c 0 python benchmarks/bench_sparse_point.py --case text --seeds 3
sparse_point smoke taskset -c 0 python benchmarks/bench_sparse_point.py --case text \
--seeds 1 --K 5
sparse_point full taskset -c 0 python benchmarks/bench_sparse_point.py --case memory --K 10
sparse_point smoke taskset -c 0 python benchmarks/bench_sparse_point.py --case memory \
--K 5 --seeds 1 --n 3000 --d 2000
learn full python benchmarks/bench_learn.py --sizes 1e3 1e4 1e5 1e6
learn smoke python benchmarks/bench_learn.py --n 2000 --seeds 1 --sizes 1e3 --repeat 1
learn_1t full $ONE python benchmarks/bench_learn.py --sizes 1e3 1e4 --repeat 9
learn_1t smoke $ONE python benchmarks/bench_learn.py --n 2000 --seeds 1 --sizes 1e3 \
--repeat 1
bic_spreads full python benchmarks/bic_spreads.py
bic_spreads smoke python benchmarks/bic_spreads.py --seeds 1 --ratios 1 2 --max-k 3
learn_cosine full python benchmarks/bench_learn_cosine.py
cosine_temperature full python benchmarks/cosine_temperature.py
cosine_temperature smoke python benchmarks/cosine_temperature.py --small
learn_cosine smoke python benchmarks/bench_learn_cosine.py --n 2000 --seeds 1 --dims 16
in_context full python benchmarks/in_context_table.py
in_context smoke python benchmarks/in_context_table.py --n 1000 --seeds 1
direction_table full python benchmarks/direction_table.py
direction_table smoke python benchmarks/direction_table.py --n 2000 --seeds 1
local_optima full python benchmarks/local_optima.py
local_optima smoke python benchmarks/local_optima.py --seeds 2
h2h full python examples/head_to_head.py --output-dir $OUT/h2h
h2h smoke python examples/head_to_head.py --small --output-dir $OUT/h2h
h2h both python $M/h2h_readme.py $OUT/h2h/head_to_head.md --out $OUT/h2h/readme_table.md
cli full python -m sklearn_attnclust
cli full python -m sklearn_attnclust --weights 3,1 --format markdown
cli smoke python -m sklearn_attnclust --n-samples 2000 --seeds 2
cli smoke python -m sklearn_attnclust --n-samples 2000 --seeds 2 --weights 3,1 \
--format markdown
usage full python $M/readme_usage.py
usage smoke python $M/readme_usage.py --seeds 2
accepts both python docs/tools/accepts_table.py
hard_one full python benchmarks/hard_cases.py --part one-start
hard_one smoke python $M/hard_smoke.py --part one-start
hard_one4 full python benchmarks/hard_cases.py --part one-start --seeds 4
hard_one4 smoke python $M/hard_smoke.py --part one-start --seeds 2
hard_more full python benchmarks/hard_cases.py --part more-heads --seeds 8
hard_more full python benchmarks/hard_cases.py --part more-heads --seeds 8 --seed-offset 8
hard_more full python benchmarks/hard_cases.py --part more-heads --seeds 8 --seed-offset 16
hard_more smoke python $M/hard_smoke.py --part more-heads
hard_many full python benchmarks/hard_cases.py --part many
hard_many smoke python $M/hard_smoke.py --part many
hard_overlap full python benchmarks/hard_cases.py --part overlap
hard_overlap smoke python $M/hard_smoke.py --part overlap
examples full python $M/run_examples.py --output-dir $OUT/examples
examples smoke python $M/run_examples.py --small --output-dir $OUT/examples
grid_vq full python benchmarks/bench_grid.py --vq --clock cpu --cpus 1 --repeat 3 \
--output-dir $RES
wide_wall full python benchmarks/bench_wide.py --d 10000 --n 1000 10000 --repeat 3 \
--budget 30 --output-dir $RES/wide_wall
dask_large full python benchmarks/bench_dask.py --large
EOF
}

commands_of() {  # JOB -> its commands, one a line (full or smoke)
    jobs_def | awk -v j="$1" -v m="$([ "$SMOKE" = 1 ] && echo smoke || echo full)" '
        $1 == j && ($2 == m || $2 == "both") { sub(/^[^ ]+ +[^ ]+ +/, ""); print }'
}

job_names() { jobs_def | awk '!seen[$1]++ { print $1 }'; }

header() {  # JOB COMMANDS: the log's first lines
    echo "# job $1$([ "$SMOKE" = 1 ] && echo ' (SMOKE: tiny sizes, figures not meaningful)')"
    echo "# commands (run in $REPO, PYTHONPATH=$REPO):"
    echo "$2" | sed 's/^/#   /'
    echo "# commit $(git rev-parse HEAD) $(git log -1 --format=%s | cut -c1-80)"
    local dirty
    dirty=$(git status --porcelain --untracked-files=no)
    echo "# tree $([ -z "$dirty" ] && echo clean || echo "DIRTY: $(echo $dirty)")"
    echo "# start $(date -u '+%F %T UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg);" \
         "$(nproc) CPUs"
    python - <<'PY'
import contextlib, io
import sklearn_attnclust as s
b = io.StringIO()
with contextlib.redirect_stdout(b):
    s.show_versions()
print("# package", s.__file__)
for line in b.getvalue().splitlines():
    if "kernel" in line or "numpy" in line or "scikit" in line:
        print("# " + line)
PY
}

if [ $# -eq 0 ] || [ "$1" = "--list" ] || [ "$1" = "-h" ]; then
    jobs_def
    exit 0
fi
for job in "$@"; do   # all names checked before any job runs
    job_names | grep -qx "$job" || { echo "unknown job: $job (measure.sh --list)" >&2; exit 2; }
done
cd "$REPO" || exit 2
if [ ! -f sklearn_attnclust/__init__.py ]; then
    echo "measure.sh: $REPO is not a sklearn_attnclust checkout" >&2; exit 2
fi
mkdir -p "$OUT" "$RES"
export PYTHONPATH=$REPO   # the scripts' imports and bench_dask's workers
status=0
for job in "$@"; do
    cmds=$(commands_of "$job")
    log=$OUT/$job.log
    header "$job" "$cmds" > "$log" 2>&1
    t0=$(date +%s)
    while IFS= read -r cmd; do
        [ -z "$cmd" ] && continue
        printf '\n$ %s\n' "$cmd" >> "$log"
        bash -c "TIMEFORMAT='# wall %Rs, user %Us, sys %Ss'; time ( $cmd )" >> "$log" 2>&1
        rc=$?
        echo "# exit $rc" >> "$log"
        [ $rc -ne 0 ] && status=1
    done <<< "$cmds"
    s=$(( $(date +%s) - t0 ))
    printf '\n# end %s; %d min %d s; load average %s\n' "$(date -u '+%F %T UTC')" \
        $((s / 60)) $((s % 60)) "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$log"
    echo "$job: $s s, $(grep -c '^# exit [^0]' "$log") failed command(s) -> $log"
done
exit $status
