"""The Python module never maps libtorch: a forecast with an XGBoost or forest model in a fresh
process leaves no libtorch (or libc10) in /proc/self/maps."""
import subprocess
import sys

import pytest

SCRIPT = r"""
import sys, gpuforecast
model = gpuforecast.train([sys.argv[1]], surrogate=sys.argv[2], out=sys.argv[3])
data = gpuforecast.read_cache(sys.argv[1])
f = model.forecast(data.configs()[:100], device="A4000", problem_size=data.problem_size)
assert f["median_ms"].shape == (100,)
maps = open("/proc/self/maps").read()
print("\n".join(sorted({line.split()[-1] for line in maps.splitlines() if "torch" in line or "libc10" in line})))
"""


@pytest.mark.parametrize("surrogate", ["xgboost", "forest"])
def test_forecast_does_not_map_libtorch(surrogate, conv_cache, tmp_path):
    out = subprocess.run([sys.executable, "-c", SCRIPT, conv_cache("A4000"), surrogate, str(tmp_path / "m.gfm")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"libtorch mapped: {out.stdout}"
