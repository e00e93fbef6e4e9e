#!/bin/bash
# session 10 round 2: docs/defaults.md's mc and ctbn cells at the switching default (commit 8e52173+), cheap datasets first
cd /work/wt-mctbn7 && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 1500
R=benchmarks/results_mctbn7
date -u > $R/s10h_defaults.log; uptime >> $R/s10h_defaults.log
nice -n 15 python benchmarks/defaults.py --learners ctbn,mc --datasets emotions,yeast,flags,birds,genbase,medical,scene,enron,slashdot --cpu-limit 300 --out $R/s10h_defaults.jsonl >> $R/s10h_defaults.log 2>&1
date -u >> $R/s10h_defaults.log; uptime >> $R/s10h_defaults.log
