#!/bin/bash
# session 8 queue 3: after enron mc switching ends, scene mc (patience=2) folds 0-1 through the harness
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
while kill -0 23775 2>/dev/null; do sleep 10; done
(ulimit -t 600; nice -n 5 python quality_mctbn.py --datasets scene --learners mc --folds 0,1 --jobs 1 --out results_mctbn7/scene_mc_p2_01.parquet > results_mctbn7/scene_mc_p2_01.log 2>&1)
