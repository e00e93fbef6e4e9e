"""Registers the structured SVMs and the paper's synthetic generator with mlw.

Nothing heavy is imported here: the learners are registered by import path and the
generator module is imported only when a dataset is generated.
"""

from __future__ import annotations

from typing import Any

import mlw
from mlw.registry import TOP_LABEL_DOC

_COMMON = {
    "C": "weight of the slack in 1/2|w|^2 + C*xi (Eq. 6, losses in [0, 1]); the paper "
         "searched 1e4-1e6 (noise free) and 1e2-1e5 (noisy)",
    "epsilon": "stop when the most violated joint constraint exceeds the slack by at most "
               "epsilon (units of the scaled loss; the paper: 0.1)",
    "loss_scale": "train with loss_scale x the loss in [0, 1]; 'auto': L for Hamming (the "
                  "count b + c), 1 for the others; 100: SVM-struct's percent (README)",
    "bias": "value of the constant feature appended to x (0: no intercept)",
    "cache_size": "label vectors cached per example (SVM-struct's -f, the paper: 5); "
                  "0: no cache, the oracle on every example each iteration (faster for "
                  "struct_hamming and struct_subset, on par for struct_f1: README)",
    "max_iter": "most cutting-plane iterations (QP solves)",
    "warm_start": "a refit on the same data (e.g. for another C) starts from the previous "
                  "fit's working set and constraint cache",
    "top_label": TOP_LABEL_DOC,
}

_GENERATOR_DOCS = {
    "labels": "number of labels L (the paper: 10, 25, 50)",
    "cardinality": "target mean labels per training instance, met exactly on the noise-free "
                   "training set (the paper: 2-4)",
    "features": "number of inputs p, uniform in [0, 1] (the paper: 25)",
    "n_train": "training instances (the paper: 400)",
    "n_validation": "validation instances (the paper: 400)",
    "n_test": "test instances (the paper: 600)",
    "noise": "label noise of training and validation: 'none', 'bernoulli:PR' (flip each "
             "label w.p. PR) or 'swap:PR' (swap a relevant and an irrelevant label w.p. PR)",
}


def generate(*, seed: int = 0, labels: int = 25, cardinality: float = 3.0, features: int = 25,
             n_train: int = 400, n_validation: int = 400, n_test: int = 600,
             noise: str = "none") -> Any:
    """The paper's synthetic data: ``{"train", "validation", "test"}`` Datasets."""
    from mlw_ssvm.synthetic import generate_synthetic

    return generate_synthetic(seed=seed, labels=labels, cardinality=cardinality,
                              features=features, n_train=n_train, n_validation=n_validation,
                              n_test=n_test, noise=noise)


@mlw.hookimpl
def mlw_register_learners(register):
    register(mlw.LearnerSpec(
        name="struct_hamming", factory="mlw_ssvm.model:StructHamming", param_docs=_COMMON,
        description="Struct(Hl): 1-slack structural SVM on x(x)y trained with the Hamming "
                    "loss (Díez et al.); a jointly regularised binary relevance"))
    register(mlw.LearnerSpec(
        name="struct_f1", factory="mlw_ssvm.model:StructF1",
        param_docs={**_COMMON,
                    "beta": "beta of the F-beta loss (1: the paper's F1)",
                    "measure": "training loss: 'f_beta' (1 - F_beta), 'jaccard', "
                               "'precision' or 'recall' (1 - the measure)"},
        description="Struct(F1): 1-slack structural SVM trained with 1 - F_beta (or "
                    "Jaccard), Algorithm 2 of Díez et al."))
    register(mlw.LearnerSpec(
        name="struct_subset", factory="mlw_ssvm.model:StructSubset", param_docs=_COMMON,
        description="Struct(01): 1-slack structural SVM trained with the subset 0/1 loss "
                    "(Díez et al.)"))


@mlw.hookimpl
def mlw_register_generators(register):
    register(mlw.GeneratorSpec(
        name="synthetic", generate=generate, param_docs=_GENERATOR_DOCS,
        description="Díez et al.'s synthetic multi-label data: uniform inputs, one "
                    "hyperplane per label at a target cardinality, train/validation/test "
                    "400/400/600, Bernoulli or Swap label noise"))
