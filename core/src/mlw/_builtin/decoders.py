"""Internal plugin: the core's decoders (defined in :mod:`mlw.decoders`, imported on
first use)."""

from __future__ import annotations

from collections.abc import Callable

from mlw.hookspecs import hookimpl
from mlw.registry import DecoderSpec


@hookimpl
def mlw_register_decoders(register: Callable[[DecoderSpec], None]) -> None:
    register(DecoderSpec("hamming", "mlw.decoders:HammingDecoder",
                         "each label with marginal >= 0.5 (Bayes-optimal for Hamming loss)",
                         measure="hamming_loss"))
    register(DecoderSpec("subset", "mlw.decoders:SubsetDecoder",
                         "the joint mode (Bayes-optimal for subset accuracy); marginals >= "
                         "0.5 for a learner with marginals only", measure="subset_accuracy"))
    register(DecoderSpec("f1", "mlw.decoders:F1Decoder",
                         "the set of highest expected F-beta by GFM: exact from size "
                         "marginals, else sampled, else under label independence",
                         measure="f1_example"))
    register(DecoderSpec("jaccard", "mlw.decoders:JaccardDecoder",
                         "approximate: the top-k set of highest mean Jaccard index on "
                         "samples from the joint (or the independent marginals)",
                         measure="accuracy"))
