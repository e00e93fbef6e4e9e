"""The fuzz suite, short run: mutations of real files fed to every reader give
a successful load or a documented one-line error, never another exception, a
MemoryError or a hang. The long run is ``benchmarks/fuzz_readers.py``; the targets are
in ``fuzz_io.py``."""

from __future__ import annotations

import faulthandler
import tempfile
from pathlib import Path

import pytest
from fuzz_io import (
    MAX_RSS_GROWTH_MB,
    Seeds,
    Tally,
    Targets,
    check_model,
    fuzz_plugin,
    make_seeds,
    model_file,
    model_seed,
    mutations,
    rss_mb,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Examples per target in CI: the whole file stays well under a CPU-minute.
CI = settings(max_examples=60, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

_tmp = Path(tempfile.mkdtemp(prefix="mlw-fuzz-ci-"))
SEEDS: Seeds = make_seeds(_tmp)
TALLY = Tally()
TARGETS = Targets(SEEDS, TALLY)
START_RSS = rss_mb()


@pytest.fixture(autouse=True)
def _watchdog():
    faulthandler.dump_traceback_later(300, exit=True)  # a hang ends the run with a traceback
    yield
    faulthandler.cancel_dump_traceback_later()
    assert rss_mb() - START_RSS < MAX_RSS_GROWTH_MB


#: The two seeds of 1,000+ attributes cost 3x a case: fewer examples (the long run has
#: thousands), which pays for test_core_io_parquet_safety.py.
WIDE = {"medical", "slashdot"}


@pytest.mark.parametrize("name", sorted(SEEDS.arff))
def test_arff_mutations(name):
    @(CI if name not in WIDE else settings(CI, max_examples=40))
    @given(mutations(SEEDS.arff[name]))
    def run(data):
        TARGETS.arff(data)

    run()


@CI
@given(mutations(SEEDS.arff["emotions"].replace(b"@relation emotions",
                                                 b"@relation 'emotions: -C -6'")))
def test_meka_relation_mutations(data):
    TARGETS.arff_meka(data)


@pytest.mark.parametrize("name", sorted(SEEDS.xml))
def test_label_xml_mutations(name):
    arff, xml = SEEDS.xml[name]

    @CI
    @given(mutations(xml))
    def run(data):
        TARGETS.xml(data, arff)

    run()


@CI
@given(mutations(SEEDS.xc))
def test_xc_mutations(data):
    TARGETS.xc(data)


@CI
@given(mutations(SEEDS.csv))
def test_csv_mutations(data):
    TARGETS.csv(data)


@CI
@given(mutations(SEEDS.parquet, max_ops=2))
def test_parquet_mutations(data):
    TARGETS.parquet(data)


@CI
@given(st.sampled_from([".gz", ".bz2"]).flatmap(
    lambda s: st.tuples(st.just(s), mutations(SEEDS.gz if s == ".gz" else SEEDS.bz2,
                                              max_ops=2))))
def test_compressed_mutations(case):
    suffix, data = case
    TARGETS.compressed(data, suffix)


def test_model_file_mutations():
    with fuzz_plugin():
        header, payload = model_seed(_tmp)

        @CI
        @given(mutations(payload), st.booleans())
        def run(data, forge):
            check_model("model", _tmp, model_file(header, data, forge=forge), TALLY)

        run()


def test_every_target_ran_and_reached_both_outcomes():
    targets = {t for t, _ in TALLY.counts}
    assert {"arff", "xml", "xc", "csv", "parquet", "compressed", "model"} <= targets
    for target in ("arff", "xml", "xc", "csv", "model"):
        outcomes = {o for t, o in TALLY.counts if t == target}
        assert "loaded" in outcomes and len(outcomes) > 1, (target, outcomes)
