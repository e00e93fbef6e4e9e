"""Registers the structured SVMs and the paper's synthetic generator with mlw.

Nothing heavy is imported here: the learners and the generator are registered by import
path, imported only when used. Their parameters are documented in their docstrings,
where ``mlw learners NAME`` and ``mlw datasets`` read them.
"""

from __future__ import annotations

from collections.abc import Callable

import mlw


@mlw.hookimpl
def mlw_register_learners(register: Callable[[mlw.LearnerSpec], None]) -> None:
    register(mlw.LearnerSpec(
        name="struct_hamming", factory="mlw_ssvm.model:StructHamming",
        description="Struct(Hl): 1-slack structural SVM on x(x)y trained with the Hamming "
                    "loss (Díez et al.); a jointly regularised binary relevance"))
    register(mlw.LearnerSpec(
        name="struct_f1", factory="mlw_ssvm.model:StructF1",
        description="Struct(F1): 1-slack structural SVM trained with 1 - F_beta (or "
                    "Jaccard), Algorithm 2 of Díez et al."))
    register(mlw.LearnerSpec(
        name="struct_subset", factory="mlw_ssvm.model:StructSubset",
        description="Struct(01): 1-slack structural SVM trained with the subset 0/1 loss "
                    "(Díez et al.)"))


@mlw.hookimpl
def mlw_register_generators(register: Callable[[mlw.GeneratorSpec], None]) -> None:
    register(mlw.GeneratorSpec(
        name="synthetic", generate="mlw_ssvm.synthetic:generate_synthetic",
        description="Díez et al.'s synthetic multi-label data: uniform inputs, one "
                    "hyperplane per label at a target cardinality, train/validation/test "
                    "400/400/600, Bernoulli or Swap label noise"))
