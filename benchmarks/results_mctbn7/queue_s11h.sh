#!/bin/bash
# session 11: the speed benchmark at commit 0a4bcd7 (snapshot /tmp/m7/s12src), after
# queue_s11f.sh (process 29565) ends: mc's edge models are back at TOL, so its figures
# of s11_speed.txt (c565578) are re-measured; one BLAS thread, nice -n 5.
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export PYTHONPATH=/tmp/m7/s12src/plugins/mctbn/src
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
while kill -0 29565 2>/dev/null; do sleep 10; done
[ "$(date -u +%H%M)" -lt 0310 ] || exit 0
R=results_mctbn7
(ulimit -t 900; date -u; uptime; nice -n 5 /usr/bin/time -f "speed: %U user %S sys %e wall" python -u bench_mctbn.py --datasets yeast,enron; date -u; uptime) > $R/s11h_speed.log 2>&1
