#!/bin/bash
# session 11: is the emotions Figure 3 path's lower EMA at c565578 the edge tolerance or
# the kernel's last bits? The same path (mc_path_switching, 10 folds) at c565578 with
# EDGE_TOL = 1e-4 (snapshot /tmp/m7/tol4src: git archive c565578, that one constant
# edited), nice -n 5, one BLAS thread.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/tol4src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
R=results_mctbn7
(ulimit -t 400; date -u; uptime; nice -n 5 /usr/bin/time -f "%U user %S sys %e wall" python -u quality_mctbn.py --datasets emotions --learners mc_path_switching --jobs 1 --out $R/figure3_switching_c565578_edgetol1e-4_emotions.parquet; date -u; uptime) > $R/s11d_emotions_tol4.log 2>&1
