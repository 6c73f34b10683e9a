"""read_cache() and Space: Kernel Tuner caches and T4 files, .json and .json.gz."""
import gzip
import os

import pytest

import gpuforecast


def test_cache_json_gz_and_plain_json_read_the_same(conv_cache, plain_json):
    gz = gpuforecast.read_cache(conv_cache("A100"))
    plain = gpuforecast.read_cache(plain_json(conv_cache("A100")))
    assert gz.kernel == "convolution_milo" and "A100" in gz.device
    assert len(gz) == len(plain) > 1000
    assert gz.configs()[:10] == plain.configs()[:10]
    assert gz.problem_size == [4096, 4096]
    df = gz.to_dataframe()
    assert list(df.columns[: len(gz.parameters)]) == gz.parameters
    assert (df["status"] == "ok").sum() == int((~df["median_ms"].isna()).sum())


def test_t4_file_reads(hub):
    t4 = gpuforecast.read_cache(os.path.join(hub, "cachefiles", "convolution_milo", "A100_T4.json.gz"))
    assert len(t4) > 1000
    assert t4.median_ms[[i for i, s in enumerate(t4.status) if s == "ok"]].min() > 0


def test_damaged_cache_names_file_and_position(tmp_path, conv_cache):
    raw = gzip.open(conv_cache("A100")).read()
    bad = tmp_path / "cut.json"
    bad.write_bytes(raw[:5000] + b"}}")
    with pytest.raises(gpuforecast.InputError, match="cut.json"):
        gpuforecast.read_cache(bad)
    with pytest.raises(ValueError, match="nothing.json"):
        gpuforecast.read_cache(tmp_path / "nothing.json")


def test_space_from_t1_matches_the_cache(conv_t1, conv_cache):
    space = gpuforecast.Space.from_t1(conv_t1)
    cache = gpuforecast.read_cache(conv_cache("A100"))
    configs = space.enumerate()
    assert len(configs) == len(cache)
    assert {tuple(c.values()) for c in configs} == {tuple(c.values()) for c in cache.configs()}
    assert all(space.contains(c) for c in configs[:100])


def test_space_sample_is_seeded(conv_t1):
    space = gpuforecast.Space.from_t1(conv_t1)
    assert space.sample(20, seed=3) == space.sample(20, seed=3)
    assert space.sample(20, seed=3) != space.sample(20, seed=4)
    assert len({tuple(c.values()) for c in space.sample(50, seed=1)}) == 50


def test_space_check_names_value_and_constraint(conv_t1):
    space = gpuforecast.Space.from_t1(conv_t1)
    good = space.sample(1, seed=1)[0]
    space.check(good)
    with pytest.raises(ValueError, match="block_size_x=17 is not among"):
        space.check(dict(good, block_size_x=17))
    with pytest.raises(ValueError, match="block_size_x\\*block_size_y<=1024"):
        space.check(dict(good, block_size_x=256, block_size_y=16, use_shmem=0, use_padding=0))
    with pytest.raises(KeyError, match="tile_size_x"):
        space.check({k: v for k, v in good.items() if k != "tile_size_x"})
    with pytest.raises(TypeError, match="use_shmem"):
        space.check(dict(good, use_shmem=object()))
    assert not space.contains(dict(good, block_size_x=17))
    # `in` is contains(): no exception for a bad value or a missing parameter.
    assert good in space
    assert dict(good, block_size_x=17) not in space
    assert {k: v for k, v in good.items() if k != "tile_size_x"} not in space


def test_space_from_python_values_and_bad_constraint():
    space = gpuforecast.Space([("a", [1, 2, 4]), ("mode", ["x", "y"])], ["a > 1"])
    assert space.enumerate() == [{"a": 2, "mode": "x"}, {"a": 2, "mode": "y"}, {"a": 4, "mode": "x"},
                                 {"a": 4, "mode": "y"}]
    with pytest.raises(gpuforecast.ExpressionError, match="nosuch"):
        gpuforecast.Space([("a", [1])], ["nosuch > 1"])


def test_read_cache_joins_the_stored_static_features(hub, features_dir):
    path = os.path.join(hub, "cachefiles", "pnpoly", "RTX_2080_Ti.json.gz")
    plain = gpuforecast.read_cache(path)
    assert plain.features == {} and plain.static_features is None
    data = gpuforecast.read_cache(path, features=features_dir)
    assert data.static_features["architecture"] == "sm_75"
    assert data.static_features["with_features"] == data.static_features["observations"] == len(data) == 4092
    for name in ("registers", "threads_per_block", "occupancy", "blocks_per_sm", "compile_failed"):
        assert len(data.features[name]) == len(data)
    assert (data.features["registers"] > 0).all()
    assert (data.features["threads_per_block"] == data.columns["block_size_x"]).all()
    assert "registers" in data.to_dataframe().columns
    # An AMD GPU has none: every configuration kept, marked unknown, and the reason given.
    amd = gpuforecast.read_cache(os.path.join(hub, "cachefiles", "convolution_milo", "MI250X.json.gz"),
                                 features=features_dir)
    assert amd.static_features["with_features"] == 0 and "HIP" in amd.static_features["note"]
    assert (amd.features["static_features_known"] == 0).all() and len(amd) > 1000
    with pytest.raises(gpuforecast.InputError, match="not_a_table"):
        gpuforecast.read_cache(path, features=features_dir / "not_a_table.csv")
