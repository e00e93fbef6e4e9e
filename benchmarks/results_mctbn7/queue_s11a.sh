#!/bin/bash
# session 11: Figure 3 at factor="switching" (mc_path_switching), emotions then scene,
# one process per fold (ulimit -t 600 each), nice -n 10, one BLAS thread; no fold
# starts after 03:15 UTC. The plugin is imported from a snapshot of commit b6fa086 (543d05e
# on main after a rebase; its plugin code is de35c04's)
# (git archive into /tmp/m7/fig3src), so edits to the worktree during the run do not
# mix code versions between folds.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/fig3src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
R=results_mctbn7
for ds in emotions scene; do
  for f in 0 1 2 3 4 5 6 7 8 9; do
    [ "$(date -u +%H%M)" -lt 0315 ] || break
    (ulimit -t 600; echo "$(date -u +%T) start $ds $f load $(cut -d' ' -f1 /proc/loadavg)"; \
     nice -n 10 /usr/bin/time -f "$ds fold $f: %U user %S sys %e wall" python quality_mctbn.py \
       --datasets $ds --learners mc_path_switching --folds $f --jobs 1 \
       --out $R/figure3_switching.parquet > $R/s11a_${ds}_$f.log 2>&1; \
     tail -1 $R/s11a_${ds}_$f.log; echo "$(date -u +%T) end load $(cut -d' ' -f1 /proc/loadavg)") >> $R/s11a_figure3.log 2>&1
  done
done
