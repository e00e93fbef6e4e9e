#!/bin/bash
# session 11: the quality protocol's mc row on emotions at c565578 (EDGE_TOL = 1e-3) and
# at c565578 with EDGE_TOL = 1e-4 (snapshot /tmp/m7/tol4src), to tell the edge
# tolerance's effect on mc's EMA from the kernel's last bits; nice -n 5, one BLAS thread.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
R=results_mctbn7
for v in s11src:s11_quality_e tol4src:s11_quality_tol4; do
  src=${v%%:*}; out=${v##*:}
  (export PYTHONPATH=/tmp/m7/$src/plugins/mctbn/src; ulimit -t 400; date -u; uptime; nice -n 5 /usr/bin/time -f "%U user %S sys %e wall" python -u quality_mctbn.py --datasets emotions --learners mc --jobs 1 --out $R/$out.parquet; date -u; uptime) > $R/s11e_$out.log 2>&1
done
