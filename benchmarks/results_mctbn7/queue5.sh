#!/bin/bash
# session 9 queue 5: scene Figure 3 path (mc_path), one process per fold after fold 0
# (pid 23832); no fold starts after 21:35 UTC (a fold is ~200 CPU s, ~13 min at load 8).
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
while kill -0 23832 2>/dev/null; do sleep 10; done
R=results_mctbn7
for f in 1 2 3 4 5 6 7 8 9; do
  [ "$(date -u +%H%M)" -lt 2135 ] || break
  (ulimit -t 500; nice -n 5 /usr/bin/time -v python quality_mctbn.py --datasets scene --learners mc_path --folds $f --jobs 1 --out $R/scene_mc_path.parquet > $R/scene_mc_path_$f.log 2>&1)
done
