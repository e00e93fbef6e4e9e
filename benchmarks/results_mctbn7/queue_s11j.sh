#!/bin/bash
# session 11: docs/defaults.md's ctbn bibtex cell at commit 0a4bcd7 (snapshot
# /tmp/m7/s12src; session 10's took 467 CPU s), one BLAS thread, nice -n 10.
cd /work/wt-mctbn7 && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/s12src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 600
R=benchmarks/results_mctbn7
date -u > $R/s11j_bibtex.log; uptime >> $R/s11j_bibtex.log
nice -n 10 python benchmarks/defaults.py --learners ctbn --datasets bibtex --cpu-limit 500 --out $R/s11j_bibtex.jsonl >> $R/s11j_bibtex.log 2>&1
date -u >> $R/s11j_bibtex.log; uptime >> $R/s11j_bibtex.log
