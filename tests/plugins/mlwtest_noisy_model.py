"""Fixture: the estimator module of ``noisy_lazy``, printing when imported."""

from mlwtest_good import PriorLearner

__all__ = ["PriorLearner"]

print("noisy model module imported")  # noqa: T201 - the point of this fixture
