#!/bin/bash
# session 10 round 2: the speed benchmark at the new default (factor="switching", commit 4adcba9)
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 1200
R=results_mctbn7
date -u > $R/s10g_speed.log; uptime >> $R/s10g_speed.log
/usr/bin/time -v nice -n 5 python -u bench_mctbn.py --datasets yeast,enron >> $R/s10g_speed.log 2>&1
date -u >> $R/s10g_speed.log; uptime >> $R/s10g_speed.log
