"""Session 10 round 2: scikit-learn ClassifierChain fit CPU with OpenBLAS default threads and
with one thread (run once as is, once under OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1); output
at the end of s10g_speed.txt."""
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import ClassifierChain
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler

import mlw

M = Path("/work/shared/datasets/mulan")
for name in ("yeast", "enron"):
    ds = mlw.load_dataset(M / f"{name}-train.arff")
    Y = ds.Y.toarray() if sp.issparse(ds.Y) else np.asarray(ds.Y)
    Y = np.ascontiguousarray(Y[:, (Y.min(0) == 0) & (Y.max(0) == 1)])
    for _ in range(2):
        c = make_pipeline(MaxAbsScaler(), ClassifierChain(LogisticRegression(max_iter=1000)))
        c0, w0 = time.process_time(), time.perf_counter()
        c.fit(ds.X, Y)
        threads = os.environ.get("OMP_NUM_THREADS", "unset")
        print(name, threads, f"{time.process_time() - c0:.2f} CPU s "
              f"{time.perf_counter() - w0:.2f} wall load {os.getloadavg()[0]:.1f}", flush=True)
