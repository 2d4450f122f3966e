"""Smoke test of the benchmark harness (benchmarks/): tiny sizes, in this
process, the numba primal and the hand-written gradient (and
numba_adstack.grad_jit once it exists). No timing is asserted and no peer
library is needed."""
import numpy as np
import pytest

from benchmarks import harness, report
from benchmarks.measure import compare
from benchmarks.workloads import WORKLOADS, finite_difference_check


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_hand_written_gradient_matches_finite_differences(name):
    workload = WORKLOADS[name]
    args = workload.make_args(quick=True)
    grads = workload.hand_grad_jit(*args)
    assert len(grads) == len(args)
    assert finite_difference_check(workload, args, grads) == []
    # The numba primal is the plain Python function, compiled.
    assert np.isclose(workload.primal_jit(*args), workload.primal(*args), rtol=1e-12)


def test_compare_flags_a_wrong_gradient():
    reference = (np.array([1.0, 2.0]), 3.0)
    assert compare((np.array([1.0, 2.0]), 3.0), reference, (0, 1)) is None
    assert "argument 1" in compare((np.array([1.0, 2.0]), 3.1), reference, (0, 1))
    assert "no gradient" in compare((None, 3.0), reference, (0, 1))


def test_quick_run_in_process(tmp_path):
    doc = harness.run(peer_names=["numba", "hand", "ours"], quick=True, in_process=True,
                      log=lambda *_: None)
    assert set(doc["workloads"]) == set(WORKLOADS)
    for name, entry in doc["workloads"].items():
        assert entry["finite_difference_check"] == "ok", name
        for peer in ("numba", "hand"):
            result = entry["results"][peer]
            assert result["status"] == "ok", (name, peer, result)
            assert result["median_s"] > 0 and result["min_s"] <= result["median_s"]
        assert entry["results"]["hand"]["over_primal"] > 0
        ours = entry["results"]["ours"]
        # Missing until numba_adstack.grad_jit exists; never a wrong gradient.
        assert ours["status"] in ("ok", "missing", "error", "unsupported"), (name, ours)
    written = report.write_all(doc, tmp_path)
    text = (tmp_path / "benchmarks.md").read_text()
    assert "python -m benchmarks" in text and "sin recurrence" in text
    assert (tmp_path / "benchmarks.json") in written


def test_parallel_benchmark_runs_and_agrees():
    # Tiny sizes: the serial and parallel gradients are compared inside run(); no timing
    # is asserted.
    from benchmarks.bench_parallel import run
    res = run(paths=64, steps=5, repeat=2)
    assert set(res["seconds"]) == {"primal_serial", "primal_parallel", "grad_serial",
                                   "grad_parallel"}


def test_parallel_map_loop_benchmark_runs_and_agrees():
    from benchmarks.bench_parallel import run_map
    res = run_map(options=64, repeat=2)
    assert res["options"] == 64 and res["seconds"]["grad_parallel"] > 0.0


def test_hmc_benchmark_runs_and_the_chains_agree():
    # A 10-d chain of 60 transitions: run() compares our gradient with the hand-written
    # one and the two chains before timing; no timing is asserted.
    from benchmarks.bench_hmc import run
    row = run(quick=True, repeat=1, with_jax=False)
    assert 0.0 < row["accept"] <= 1.0 and row["min_ess"] > 0.0
