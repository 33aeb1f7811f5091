"""The direction statistics' first pass imports none of the package's modules
(bench_risk's first-call cost: the wide-rows bound was imported inside the call, ~8 ms of
module loading on the first pass of a process), and still reads the bound at call time
(tests move it)."""
import subprocess
import sys

import numpy as np

from sklearn_attnclust.maths.direction import scales
from sklearn_attnclust.maths.direction.attention import ContextStatistics
from sklearn_attnclust.maths.point import moments


def test_first_pass_imports_no_package_module():
    # Only the package's own modules: numpy or scipy may load a submodule lazily on a
    # first call in some releases, which is not the cost this test guards.
    code = (
        "import sys\nimport numpy as np\n"
        "from sklearn_attnclust.maths.direction.attention import ContextStatistics\n"
        "from sklearn_attnclust.maths.direction.scales import axis_moments_top\n"
        "X = np.random.default_rng(0).standard_normal((300, 16))\n"
        "before = set(sys.modules)\n"
        "ContextStatistics.from_data(X, keep_data=False, need_fourth=False)\n"
        "axis_moments_top(X)\n"
        "new = {m for m in set(sys.modules) - before if m.startswith('sklearn_attnclust')}\n"
        "assert not new, sorted(new)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_wide_bound_read_at_call_time(monkeypatch):
    X = np.random.default_rng(1).standard_normal((50, 12))
    dense = ContextStatistics.from_data(X, keep_data=True, need_fourth=False)
    assert isinstance(dense.second, np.ndarray)
    assert isinstance(scales.axis_moments_top(X)[1], np.ndarray)
    monkeypatch.setattr(moments, "DENSE_FEATURES", 8)
    wide = ContextStatistics.from_data(X, keep_data=True, need_fourth=False)
    assert not isinstance(wide.second, np.ndarray)
    assert isinstance(scales.axis_moments_top(X)[1], scales.WideMoment)
