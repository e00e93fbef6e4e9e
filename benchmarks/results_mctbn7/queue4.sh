#!/bin/bash
# session 9 queue 4: after enron baselines folds 6-9 (pid 24004), every baseline's per-fold
# records on all 10 folds (enron 0-5; emotions, yeast, scene 0-9) and emotions mc at the
# defaults, one store, so the quality table's markers are t-tests against the default mc.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
while kill -0 24004 2>/dev/null; do sleep 10; done
R=results_mctbn7
(ulimit -t 900; nice -n 5 /usr/bin/time -v python quality_mctbn.py --datasets enron --learners br,cc,pcc,ctbn --folds 0,1,2,3,4,5 --jobs 1 --out $R/baselines.parquet > $R/baselines_enron.log 2>&1)
(ulimit -t 900; nice -n 5 /usr/bin/time -v python quality_mctbn.py --datasets emotions,yeast,scene --learners br,cc,pcc,ctbn --jobs 1 --out $R/baselines.parquet > $R/baselines_eys.log 2>&1)
(ulimit -t 900; nice -n 5 /usr/bin/time -v python quality_mctbn.py --datasets emotions --learners mc --jobs 1 --out $R/baselines.parquet > $R/baselines_emotions_mc.log 2>&1)
