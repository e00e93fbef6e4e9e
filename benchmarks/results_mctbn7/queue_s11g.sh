#!/bin/bash
# session 11, after mc went back to TOL for its edge models (commit 0a4bcd7; the plugin
# from a git-archive snapshot in /tmp/m7/s12src), one BLAS thread, nice -n 5. Queue P:
# the quality protocol's mc rows on enron and yeast, then emotions (which must equal
# s11_mc_kernel_tol1e-4_emotions.parquet: the same computation). Queue Q
# (queue_s11g.sh): mc on scene, Figure 3 at factor="switching" on scene, then emotions.
# No job starts after 03:10 UTC.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/s12src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
R=results_mctbn7
log=$R/s11g_queue.log
run() {  # name ulimit command...
  local name=$1 lim=$2; shift 2
  [ "$(date -u +%H%M)" -lt 0310 ] || { echo "$(date -u +%T) skip $name (late)" >> $log; return; }
  echo "$(date -u +%T) start $name load $(cut -d' ' -f1 /proc/loadavg)" >> $log
  (ulimit -t $lim; nice -n 5 /usr/bin/time -f "$name: %U user %S sys %e wall" "$@") > $R/s11g_$name.log 2>&1
  tail -1 $R/s11g_$name.log >> $log
  echo "$(date -u +%T) end $name load $(cut -d' ' -f1 /proc/loadavg)" >> $log
}
q() {  # dataset learner store
  run $2_$1 1500 python -u quality_mctbn.py --datasets $1 --learners $2 --jobs 1 --out $R/$3.parquet
}
q scene mc s11_mc_final_q
fig3() {
  for f in 0 1 2 3 4 5 6 7 8 9; do
    run fig3_$1_$f 600 python -u quality_mctbn.py --datasets $1 --learners mc_path_switching --folds $f --jobs 1 --out $R/figure3_switching_final.parquet
  done
}
fig3 scene
fig3 emotions
