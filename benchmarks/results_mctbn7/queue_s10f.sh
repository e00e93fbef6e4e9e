#!/bin/bash
# session 10 round 2: the quality table's mc / ctbn rows at the new default (factor="switching", commit 6a01118)
# usage: queue_s10f.sh NAME DATASETS LEARNERS
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 2400
R=results_mctbn7
date -u > $R/s10f_$1.log; uptime >> $R/s10f_$1.log
/usr/bin/time -v nice -n 5 python quality_mctbn.py --datasets $2 --learners $3 --out $R/s10f_$1.parquet >> $R/s10f_$1.log 2>&1
date -u >> $R/s10f_$1.log; uptime >> $R/s10f_$1.log
