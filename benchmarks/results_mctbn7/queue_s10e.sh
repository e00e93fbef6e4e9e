#!/bin/bash
# session 10, stream E: Q2 emotions, the authors' EM start (with and without their distinct-structure rule), both forms, protocol folds
cd /work/wt-mctbn7/benchmarks && . /work/venv-mctbn7/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
ulimit -t 1200
R=results_mctbn7
for f in feature switching; do
/usr/bin/time -v nice -n 5 python growth_anatomy_mctbn.py --dataset emotions --authors-em --params "{\"factor\": \"$f\"}" --out $R/s10_anatomy.jsonl > $R/s10_anat_emotions_${f}_aem.log 2>&1
/usr/bin/time -v nice -n 5 python growth_anatomy_mctbn.py --dataset emotions --authors-em --distinct --params "{\"factor\": \"$f\"}" --out $R/s10_anatomy.jsonl > $R/s10_anat_emotions_${f}_aem_distinct.log 2>&1
done
