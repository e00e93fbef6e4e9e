#!/bin/bash
# session 11, queue A: at commit c565578 (the plugin from a git-archive snapshot in
# /tmp/m7/s11src, so worktree edits during the run cannot mix versions), one BLAS
# thread, nice -n 5: the speed benchmark, then the quality protocol's ctbn rows (4
# datasets) and mc rows (enron, yeast, emotions). No job starts after 03:10 UTC.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/s11src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
R=results_mctbn7
log=$R/s11b_queue.log
run() {  # name ulimit command...
  local name=$1 lim=$2; shift 2
  [ "$(date -u +%H%M)" -lt 0310 ] || { echo "$(date -u +%T) skip $name (late)" >> $log; return; }
  echo "$(date -u +%T) start $name load $(cut -d' ' -f1 /proc/loadavg)" >> $log
  (ulimit -t $lim; nice -n 5 /usr/bin/time -f "$name: %U user %S sys %e wall" "$@") > $R/s11b_$name.log 2>&1
  tail -1 $R/s11b_$name.log >> $log
  echo "$(date -u +%T) end $name load $(cut -d' ' -f1 /proc/loadavg)" >> $log
}
run speed 900 python -u bench_mctbn.py --datasets yeast,enron
for ds in emotions yeast scene enron; do
  run ctbn_$ds 600 python -u quality_mctbn.py --datasets $ds --learners ctbn --jobs 1 --out $R/s11_quality_a.parquet
done
run mc_enron 1500 python -u quality_mctbn.py --datasets enron --learners mc --jobs 1 --out $R/s11_quality_a.parquet
run mc_yeast 900 python -u quality_mctbn.py --datasets yeast --learners mc --jobs 1 --out $R/s11_quality_a.parquet
run mc_emotions 400 python -u quality_mctbn.py --datasets emotions --learners mc --jobs 1 --out $R/s11_quality_a.parquet
