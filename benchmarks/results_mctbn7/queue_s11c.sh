#!/bin/bash
# session 11, queue B: at commit c565578 (the plugin from a git-archive snapshot in
# /tmp/m7/s11src, so worktree edits during the run cannot mix versions), one BLAS
# thread, nice -n 5: Figure 3 at factor="switching" on emotions (mc_path_switching, one process per
# fold), the quality protocol's mc row on scene, Figure 3 on scene. No job starts after 03:10 UTC.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/s11src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
R=results_mctbn7
log=$R/s11c_queue.log
run() {  # name ulimit command...
  local name=$1 lim=$2; shift 2
  [ "$(date -u +%H%M)" -lt 0310 ] || { echo "$(date -u +%T) skip $name (late)" >> $log; return; }
  echo "$(date -u +%T) start $name load $(cut -d' ' -f1 /proc/loadavg)" >> $log
  (ulimit -t $lim; nice -n 5 /usr/bin/time -f "$name: %U user %S sys %e wall" "$@") > $R/s11c_$name.log 2>&1
  tail -1 $R/s11c_$name.log >> $log
  echo "$(date -u +%T) end $name load $(cut -d' ' -f1 /proc/loadavg)" >> $log
}
fig3() {
  for f in 0 1 2 3 4 5 6 7 8 9; do
    run fig3_$1_$f 600 python -u quality_mctbn.py --datasets $1 --learners mc_path_switching --folds $f --jobs 1 --out $R/figure3_switching.parquet
  done
}
fig3 emotions
run mc_scene 1500 python -u quality_mctbn.py --datasets scene --learners mc --jobs 1 --out $R/s11_quality_b.parquet
fig3 scene
