#!/bin/bash
# session 11: docs/defaults.md's ctbn and mc cells at commit 0a4bcd7 (snapshot
# /tmp/m7/s12src), after queue_s11h.sh (process 29679) ends; the same command as
# session 10's queue_s10h.sh, one BLAS thread, nice -n 10.
cd /work/wt-mctbn7 && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/s12src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
while kill -0 29679 2>/dev/null; do sleep 10; done
[ "$(date -u +%H%M)" -lt 0300 ] || exit 0
ulimit -t 1500
R=benchmarks/results_mctbn7
date -u > $R/s11i_defaults.log; uptime >> $R/s11i_defaults.log
nice -n 10 python benchmarks/defaults.py --learners ctbn,mc --datasets emotions,yeast,flags,birds,genbase,medical,scene,enron,slashdot --cpu-limit 300 --out $R/s11i_defaults.jsonl >> $R/s11i_defaults.log 2>&1
date -u >> $R/s11i_defaults.log; uptime >> $R/s11i_defaults.log
