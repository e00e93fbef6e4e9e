"""Plugin discovery, validation and broken-plugin handling, with the fixture plugins of
``tests/plugins/`` installed through fake entry points."""

from __future__ import annotations

import numpy as np
import pytest

import mlw
from mlw.plugins import AmbiguousNameError, PluginManager, UnknownNameError


def _info(pm: PluginManager, name: str) -> mlw.PluginInfo:
    return next(i for i in pm.plugins() if i.name == name)


def test_good_plugin_registers_one_of_each_kind(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good")
    info = _info(pm, "good")
    assert (info.status, info.error) == ("ok", None)
    assert (info.distribution, info.version, info.builtin) == ("mlw-good", "1.0.0", False)
    assert info.registers == {"learner": ["fixture_prior"], "threshold": ["fixture_half"],
                              "decoder": ["fixture_top_one"],
                              "metric": ["fixture_mean_labels"], "loader": ["fixture_format"],
                              "generator": ["fixture_blobs"]}
    # and the registrations work through the public API
    ds = mlw.generate_dataset("fixture_blobs", seed=3)
    model = mlw.get_learner("fixture_prior", threshold="fixture_half").fit(ds.X, ds.Y)
    assert model.predict(ds.X).shape == ds.Y.shape
    values = mlw.evaluate(ds.Y, model.predict(ds.X), metrics=["fixture_mean_labels"])
    assert values["fixture_mean_labels"] == pytest.approx((model.prior_ >= 0.5).sum())
    assert mlw.get_decoder("fixture_top_one").decode(model, ds.X).sum() == ds.X.shape[0]
    assert pm.owner("learner", "fixture_prior") is info
    assert pm.versions()["mlw-good"] == "1.0.0"


def test_builtin_plugins_come_first_and_register_through_the_hooks(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good")
    names = [i.name for i in pm.plugins()]
    assert names[:4] == ["mlw.decoders", "mlw.loaders", "mlw.metrics", "mlw.thresholds"]
    assert {"fixed", "pcut", "cardinality", "one_threshold"} <= set(
        _info(pm, "mlw.thresholds").registers["threshold"])
    assert all(i.builtin and i.distribution == "mlw-core" for i in pm.plugins()[:3])


def test_plugin_failing_to_import_is_broken_and_the_rest_works(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good", bad="mlwtest_import_error")
    bad = _info(pm, "bad")
    assert bad.status == "broken"
    assert bad.error == ("import failed: ImportError: mlwtest_import_error needs the package "
                         "'not-installed-anywhere'")
    assert _info(pm, "good").status == "ok"
    assert "fixture_prior" in pm.learners()
    # a second collection (the registry is rebuilt after a register) keeps the status
    pm.register(object(), name="empty")
    assert _info(pm, "bad").status == "broken"


def test_malformed_registration_breaks_only_its_plugin(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good", malformed="mlwtest_malformed")
    info = _info(pm, "malformed")
    assert info.status == "broken"
    assert info.error == "learner 'malformed_prior': description is missing"
    assert info.registers == {k: [] for k in info.registers}
    # its valid metric is withdrawn with it; the good plugin is untouched
    assert "malformed_plugins_metric" not in pm.metrics()
    assert _info(pm, "good").status == "ok"


@pytest.mark.parametrize("spec, message", [
    (lambda: mlw.LearnerSpec("Bad Name", object, "d"), "is not a lowercase identifier"),
    (lambda: mlw.LearnerSpec("x", 3, "d"), "factory must be callable"),
    (lambda: mlw.MetricSpec("m", len, True, "probabilities", "d"), "needs must be"),
    (lambda: mlw.MetricSpec("m", len, 1, "labels", "d"), "greater_is_better must be a bool"),
    (lambda: mlw.LoaderSpec("f", ("arff",), len, "d"), "suffixes must be a tuple"),
    (lambda: mlw.ThresholdSpec("t", None, "d"), "factory must be callable"),
    (lambda: mlw.GeneratorSpec("g", len, "  "), "description is missing"),
    (lambda: mlw.GeneratorSpec("g", "no colon here", "d"), "not an import path"),
])
def test_each_malformed_spec_is_rejected_with_its_reason(fresh_plugins, spec, message) -> None:
    kind = type(spec()).__name__.replace("Spec", "").lower()
    hook = {"learner": "mlw_register_learners", "metric": "mlw_register_metrics",
            "loader": "mlw_register_loaders", "threshold": "mlw_register_thresholds",
            "generator": "mlw_register_generators"}[kind]

    class Plugin:
        pass

    setattr(Plugin, hook, staticmethod(mlw.hookimpl(
        {"mlw_register_learners": lambda register: register(spec()),
         "mlw_register_metrics": lambda register: register(spec()),
         "mlw_register_loaders": lambda register: register(spec()),
         "mlw_register_thresholds": lambda register: register(spec()),
         "mlw_register_generators": lambda register: register(spec())}[hook])))
    # pluggy needs a named function with the hook's name
    impl = getattr(Plugin, hook)
    impl.__name__ = hook
    fresh_plugins.register(Plugin(), name="inline")
    info = _info(fresh_plugins, "inline")
    assert info.status == "broken"
    assert message in info.error


def test_wrong_spec_type_is_rejected(fresh_plugins) -> None:
    class Plugin:
        @staticmethod
        @mlw.hookimpl
        def mlw_register_learners(register):
            register(mlw.MetricSpec("m", len, True, "labels", "d"))

    fresh_plugins.register(Plugin(), name="wrongtype")
    assert _info(fresh_plugins, "wrongtype").error == (
        "plugin 'wrongtype' registered a MetricSpec where a LearnerSpec was expected")


def test_duplicate_learner_name_is_contested_and_named_with_both_plugins(install_plugins
                                                                         ) -> None:
    pm = install_plugins(good="mlwtest_good", zz_dup="mlwtest_duplicate")
    message = ("learner 'fixture_prior' is registered by both plugin 'good' (mlw-good) and "
               "plugin 'zz_dup' (mlw-zz_dup); choose one: 'good:fixture_prior' or "
               "'zz_dup:fixture_prior'")
    for name in ("good", "zz_dup"):
        info = _info(pm, name)
        assert (info.status, info.error, info.conflicts) == ("ok", None, [message])
    # neither plugin gets the plain name; each is reachable by its qualified name
    with pytest.raises(AmbiguousNameError) as exc:
        pm.learner("fixture_prior")
    assert str(exc.value) == message
    assert pm.learner("good:fixture_prior").description == "label frequencies"
    assert pm.learner("zz_dup:fixture_prior").description == "a second fixture_prior"
    assert pm.owner("learner", "zz_dup:fixture_prior").name == "zz_dup"
    assert {"good:fixture_prior", "zz_dup:fixture_prior"} <= set(pm.learners())
    assert "fixture_prior" not in pm.learners()
    # the other names of the plugin are untouched
    assert pm.threshold("fixture_half") and pm.metric("fixture_mean_labels")


def test_a_plugin_cannot_hijack_br_or_take_down_baselines(install_plugins) -> None:
    """An entry point sorting before 'baselines' registered 'br' and took
    --learner br, and the whole baselines plugin (br, cc, lp, pcc) was withdrawn."""
    pm = install_plugins(keep_real=True, aaa="mlwtest_hijack")
    assert _info(pm, "aaa").status == "ok" and _info(pm, "baselines").status == "ok"
    with pytest.raises(AmbiguousNameError, match=r"learner 'br' is registered by both plugin "
                                                 r"'aaa' \(mlw-aaa\) and plugin 'baselines' "
                                                 r"\(mlw-baselines\); choose one: 'aaa:br' "
                                                 r"or 'baselines:br'"):
        mlw.get_learner("br")
    assert type(mlw.get_learner("baselines:br")).__name__ == "BinaryRelevance"
    assert type(mlw.get_learner("aaa:br")).__name__ == "PriorLearner"
    for name in ("cc", "lp", "pcc", "hijack_own"):  # every other name still works
        assert mlw.get_learner(name) is not None
    assert {"br", "cc", "lp", "pcc"} <= set(_info(pm, "baselines").registers["learner"])


def test_a_plugin_registering_the_same_name_twice_is_broken(fresh_plugins) -> None:
    from mlwtest_good import PriorLearner

    class Plugin:
        @staticmethod
        @mlw.hookimpl
        def mlw_register_learners(register):
            register(mlw.LearnerSpec("twice", PriorLearner, "first"))
            register(mlw.LearnerSpec("twice", PriorLearner, "second"))

    fresh_plugins.register(Plugin(), name="twice_plugin")
    assert _info(fresh_plugins, "twice_plugin").error == (
        "plugin 'twice_plugin' registers learner 'twice' twice")


def test_a_plugin_cannot_take_a_builtin_metric_name(fresh_plugins) -> None:
    from mlwtest_good import mean_labels

    class Plugin:
        @staticmethod
        @mlw.hookimpl
        def mlw_register_metrics(register):
            register(mlw.MetricSpec("hamming_loss", mean_labels, False, "labels", "imposter"))
            register(mlw.MetricSpec("own_metric", mean_labels, False, "labels", "its own"))

    fresh_plugins.register(Plugin(), name="imposter")
    info = _info(fresh_plugins, "imposter")
    assert info.status == "ok"
    assert info.conflicts == [
        "metric 'hamming_loss' is registered by both plugin 'mlw.metrics' (mlw-core) and "
        "plugin 'imposter'; the core keeps the name ('imposter:hamming_loss' names this "
        "plugin's)"]
    assert fresh_plugins.metric("hamming_loss").description != "imposter"
    assert fresh_plugins.metric("imposter:hamming_loss").description == "imposter"
    assert fresh_plugins.metric("own_metric").description == "its own"


def test_plugin_output_at_import_and_registration_goes_to_stderr(install_plugins, capsys,
                                                                  monkeypatch) -> None:
    monkeypatch.setenv("MLW_SLOW_PLUGIN_SECONDS", "0.05")
    monkeypatch.setenv("MLWTEST_NOISY_SLEEP", "0.1")
    with pytest.warns(mlw.plugins.SlowPluginWarning,
                      match=r"plugin 'noisy' \(mlw-noisy\) took 0\.\d s to import.*disable "
                            r"it with MLW_DISABLE_PLUGINS=noisy"):
        pm = install_plugins(noisy="mlwtest_noisy")
    assert "noisy_prior" in pm.learners()
    out, err = capsys.readouterr()
    assert out == ""
    assert "noisy plugin says hello" in err and "noisy plugin registers" in err
    assert _info(pm, "noisy").import_seconds >= 0.1


def test_system_exit_while_registering_marks_the_plugin_broken(fresh_plugins) -> None:
    class Plugin:
        @staticmethod
        @mlw.hookimpl
        def mlw_register_learners(register):
            raise SystemExit(4)

    fresh_plugins.register(Plugin(), name="quitter")
    info = _info(fresh_plugins, "quitter")
    assert (info.status, info.error) == ("broken", "registration failed: SystemExit: 4")


def test_unknown_hook_marks_the_plugin_broken(install_plugins) -> None:
    pm = install_plugins(typo="mlwtest_unknown_hook")
    info = _info(pm, "typo")
    assert info.status == "broken"
    assert info.error.startswith("implements unknown hook(s) mlw_register_learner (known: ")


def test_disabled_plugin_is_never_imported(install_plugins, monkeypatch) -> None:
    monkeypatch.setenv("MLW_DISABLE_PLUGINS", "blocked")
    pm = install_plugins(good="mlwtest_good", blocked="mlwtest_blocked")
    info = _info(pm, "blocked")
    assert (info.status, info.error) == ("disabled", "disabled by MLW_DISABLE_PLUGINS")
    assert _info(pm, "good").status == "ok"


@pytest.mark.parametrize("value", ["*", "all", "mlw-good, mlw-blocked", "good,blocked"])
def test_disable_by_star_or_distribution_name(install_plugins, monkeypatch, value) -> None:
    monkeypatch.setenv("MLW_DISABLE_PLUGINS", value)
    pm = install_plugins(good="mlwtest_good", blocked="mlwtest_blocked")
    assert {_info(pm, n).status for n in ("good", "blocked")} == {"disabled"}
    assert "fixture_prior" not in pm.learners()
    # the core's own registrations cannot be disabled
    assert "hamming_loss" in pm.metrics()


def test_entry_point_name_clash_between_distributions(install_plugins, monkeypatch) -> None:
    from conftest import FakeDistribution, FakeEntryPoint

    import mlw.plugins as plugins

    eps = [FakeEntryPoint("same", "mlwtest_good", FakeDistribution("mlw-a", "1.0")),
           FakeEntryPoint("same", "mlwtest_duplicate", FakeDistribution("mlw-b", "1.0"))]
    install_plugins()
    monkeypatch.setattr(plugins, "_entry_points", lambda: eps)
    pm = PluginManager()
    # entry points load sorted by (name, module): mlwtest_duplicate first
    assert (_info(pm, "same").status, _info(pm, "same").distribution) == ("ok", "mlw-b")
    clash = _info(pm, "same@mlw-a")
    assert clash.status == "broken"
    assert clash.error == "entry point name 'same' is already used by plugin 'same' (mlw-b)"


@pytest.mark.parametrize("kind, typo, expected", [
    ("learner", "fixture_pior", "fixture_prior"),
    ("metric", "hamming_los", "hamming_loss"),
    ("threshold", "pcutt", "pcut"),
    ("generator", "fixture_blob", "fixture_blobs"),
])
def test_unknown_names_suggest_close_ones(install_plugins, kind, typo, expected) -> None:
    pm = install_plugins(good="mlwtest_good")
    with pytest.raises(UnknownNameError) as exc:
        getattr(pm, kind)(typo)
    message = str(exc.value)
    assert message.startswith(f"unknown {kind} {typo!r}; did you mean {expected!r}")
    assert "\n" not in message


def test_get_learner_rejects_unknown_parameters(install_plugins) -> None:
    install_plugins(good="mlwtest_good")
    with pytest.raises(ValueError, match="learner 'fixture_prior' has no parameter 'k' "
                                         r"\(parameters: threshold, smoothing\)"):
        mlw.get_learner("fixture_prior", k=3)


def test_unregister_withdraws_registrations(fresh_plugins) -> None:
    import mlwtest_good

    fresh_plugins.register(mlwtest_good, name="temporary")
    assert "fixture_prior" in fresh_plugins.learners()
    fresh_plugins.unregister("temporary")
    assert "fixture_prior" not in fresh_plugins.learners()
    assert "temporary" not in [i.name for i in fresh_plugins.plugins()]


def test_plugin_info_as_dict_lists_only_nonempty_kinds(install_plugins) -> None:
    pm = install_plugins(good="mlwtest_good", bad="mlwtest_import_error")
    d = _info(pm, "bad").as_dict()
    assert d == {"name": "bad", "module": "mlwtest_import_error", "distribution": "mlw-bad",
                 "version": "1.0.0", "builtin": False, "status": "broken",
                 "error": d["error"], "registers": {}, "conflicts": []}
    assert np.isin(list(_info(pm, "good").as_dict()["registers"]),
                   ["learner", "threshold", "decoder", "metric", "loader", "generator"]).all()


def test_a_string_factory_is_imported_on_first_use_and_names_its_plugin_when_broken(
        fresh_plugins) -> None:
    class Lazy:
        @mlw.hookimpl
        def mlw_register_learners(self, register):
            register(mlw.LearnerSpec("lazy_ok", "mlwtest_good:PriorLearner", "lazy"))
            register(mlw.LearnerSpec("lazy_missing", "mlwtest_no_such_module:X", "missing"))

        @mlw.hookimpl
        def mlw_register_generators(self, register):
            register(mlw.GeneratorSpec("lazy_gen", "mlwtest_good:blobs", "lazy"))
            register(mlw.GeneratorSpec("lazy_gen_missing", "mlwtest_no_such_module:g", "x"))

    fresh_plugins.register(Lazy(), name="lazy", distribution="mlw-lazy", version="1.0")
    assert _info(fresh_plugins, "lazy").status == "ok"  # registering imported nothing
    learner = mlw.get_learner("lazy_ok", smoothing=1.0)
    assert type(learner).__name__ == "PriorLearner" and learner.smoothing == 1.0
    with pytest.raises(mlw.PluginError, match="learner 'lazy_missing' of plugin 'lazy': "
                                              "cannot import 'mlwtest_no_such_module:X'"):
        mlw.get_learner("lazy_missing")
    assert [(p.name, p.doc) for p in mlw.list_learners()["lazy_ok"].params] == [
        ("threshold", "Strategy."), ("smoothing", "Laplace smoothing.")]
    assert mlw.generate_dataset("lazy_gen", seed=1, n=7).X.shape == (7, 2)
    assert [(p.name, p.doc) for p in mlw.list_generators()["lazy_gen"].params] == [
        ("n", "Instances.")]
    with pytest.raises(mlw.PluginError, match="generator 'lazy_gen_missing' of plugin "
                                              "'lazy': cannot import"):
        mlw.generate_dataset("lazy_gen_missing")
    with pytest.raises(mlw.RegistrationError, match="not an import path"):
        mlw.LearnerSpec("x", "no colon here", "d").validate()


def test_every_installed_learner_and_threshold_loads_and_states_its_tags() -> None:
    """What the installed plugins registered by import path really exists and the tags
    come from the class."""
    from mlw.plugins import get_plugin_manager

    pm = get_plugin_manager()
    for name, spec in pm.learners().items():
        cls = spec.learner_class()
        assert spec.tags == mlw.LearnerTags.of(cls), name
    for name, spec in pm.thresholds().items():
        assert callable(spec.load()), name


_COLD_LISTING = r"""
import importlib, json, sys
from importlib import metadata
for ep in metadata.entry_points(group="mlw"):
    importlib.import_module(ep.value)
import mlw
infos = mlw.list_plugins()
estimators = {spec.factory.split(":")[0] for spec in mlw.list_learners().values()
              if isinstance(spec.factory, str)}
heavy = sorted(m for m in sys.modules
               if m.split(".")[0] in ("sklearn", "numba", "polars", "matplotlib", "dask")
               or m == "scipy.stats" or m in estimators)
print(json.dumps({"plugins": [i.name for i in infos if i.status == "ok"],
                  "estimators": sorted(estimators), "heavy": heavy}))
"""


def test_registering_and_listing_plugins_imports_no_estimator_numba_or_sklearn() -> None:
    """docs/writing-plugins.md promises cheap registration: importing every installed
    ``*.plugin`` module and listing the plugins (which runs every registration hook)
    loads no estimator module, no numba and no scikit-learn (nor scipy.stats, polars,
    matplotlib or dask, each of which costs up to seconds). A fresh interpreter, so
    nothing imported by other tests hides a regression."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _COLD_LISTING], capture_output=True,
                         text=True, check=True, timeout=120)
    found = json.loads(out.stdout)
    assert {"baselines", "lcif", "xdcc", "lacovac"} <= set(found["plugins"])
    assert {"mlw_xdcc.xdcc", "mlw_lcif.model", "mlw_baselines.binary_relevance"} <= set(
        found["estimators"])  # every learner of these plugins is registered by import path
    assert found["heavy"] == []


def test_a_broken_builtin_plugin_is_an_error_not_an_empty_registry(fresh_plugins,
                                                                   monkeypatch) -> None:
    """The core's own loaders failing to register (a missing dependency of mlw-core)
    must not turn into 'no loader claims .arff'."""
    import mlw._builtin.loaders as loaders

    def broken(register):
        raise ModuleNotFoundError("No module named 'defusedxml'")

    hookimpl = next(i for i in fresh_plugins._pm.hook.mlw_register_loaders.get_hookimpls()
                    if i.plugin is loaders)
    monkeypatch.setattr(hookimpl, "function", broken)
    fresh_plugins._registry = None
    with pytest.raises(mlw.PluginError, match="mlw's own plugin 'mlw.loaders' cannot "
                                              "register: ModuleNotFoundError"):
        mlw.list_loaders()
