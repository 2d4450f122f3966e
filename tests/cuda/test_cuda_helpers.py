"""Helpers of numba_adstack.cuda that need neither a GPU nor the simulator: adjoint argument
checks, the simulator intrinsics' overflow behaviour, PTX depot parsing, the fake device."""
import numpy as np
import pytest

pytest.importorskip("numba_cuda",
                    reason="numba-cuda is not installed (pip install \"numba-cuda[cu12]\")")

import numba_adstack as nad  # noqa: E402
import numba_adstack.cuda as nadc  # noqa: E402
from numba_adstack import AdjointArgumentError  # noqa: E402
from numba_adstack.cuda import simulator as sim  # noqa: E402
from numba_adstack.cuda.testing import fake_current_device  # noqa: E402


class _Recorder:
    """Stands in for a CUDA dispatcher: records launches."""

    def __init__(self):
        self.launches = []

    def __getitem__(self, config):
        return lambda *args: self.launches.append((config, args))


def _grad_kernel():
    rec = _Recorder()
    k = nadc.OverflowCheckedKernel(rec, "step", 16, n_args=4, arg_names=["x", "w", "y", "n"])
    return rec, k


def test_adjoint_count_is_checked_before_launch():
    rec, k = _grad_kernel()
    x, w, y = np.zeros(8), np.zeros(1), np.zeros(8)
    with pytest.raises(AdjointArgumentError) as info:
        k[1, 8](x, w, y, 3, np.zeros(8), np.zeros(1))
    msg = str(info.value)
    assert "step.grad" in msg and "expected 3 adjoint(s), got 2" in msg
    assert "x_bar, w_bar, y_bar" in msg
    with pytest.raises(AdjointArgumentError, match="expected 3 adjoint"):
        k[1, 8](x, w, y, 3, np.zeros(8), np.zeros(1), np.zeros(8), np.zeros(8))
    with pytest.raises(AdjointArgumentError, match="kernel's 4 argument"):
        k[1, 8](x, w)
    assert rec.launches == []


def test_adjoint_shape_and_dtype_are_checked():
    rec, k = _grad_kernel()
    x, w, y = np.zeros(8), np.zeros(1), np.zeros(8)
    with pytest.raises(AdjointArgumentError, match=r"adjoint of w .*\(1,\), float64.*\(2,\)"):
        k[1, 8](x, w, y, 3, np.zeros(8), np.zeros(2), np.zeros(8))
    with pytest.raises(AdjointArgumentError, match=r"adjoint of y .*dtype float32"):
        k[1, 8](x, w, y, 3, np.zeros(8), np.zeros(1), np.zeros(8, np.float32))
    with pytest.raises(AdjointArgumentError, match=r"adjoint of x must be an array .* got float"):
        k[1, 8](x, w, y, 3, 0.0, np.zeros(1), np.zeros(8))
    assert rec.launches == []


class _HostFlag:
    """Stands in for the device flag array."""

    def __init__(self):
        self.value = np.zeros(1, np.int32)

    def __setitem__(self, i, v):
        self.value[i] = v

    def copy_to_host(self, stream=0):
        return self.value.copy()

    def copy_to_device(self, ary, stream=0):
        self.value[:] = ary


class _HostKernel(nadc.OverflowCheckedKernel):
    def new_flag(self):
        return _HostFlag()


def test_launch_appends_the_flag_raises_and_resets():
    def body(x, w, y, n, x_bar, w_bar, y_bar, flag):
        if n > 16:
            flag[0] = 1
    launches = []

    class Disp:
        def __getitem__(self, config):
            return lambda *args: (launches.append((config, args)), body(*args))
    k = _HostKernel(Disp(), "step", 16, n_args=4, arg_names=["x", "w", "y", "n"])
    x, w, y = np.zeros(8), np.zeros(1), np.zeros(8)
    adj = (np.zeros(8), np.zeros(1), np.zeros(8))
    k[2, 4](x, w, y, 3, *adj)
    (config, args), = launches
    assert config == (2, 4) and len(args) == 8 and isinstance(args[-1], _HostFlag)
    with pytest.raises(nad.AdStackOverflowError, match="'step' \\(ad_stack_size=16\\)"):
        k[2, 4](x, w, y, 17, *adj)
    assert k._flag.value[0] == 0          # reset: the next launch that fits is clean
    k[2, 4](x, w, y, 16, *adj)
    assert len(launches) == 3


def test_adjoint_positions_select_the_arguments():
    x, idx, y = np.zeros(4), np.zeros(4, np.int64), np.zeros(4)
    nadc.check_adjoint_args("k", (x, idx, y), (np.zeros(4), np.zeros(4)), ["x", "idx", "y"],
                            adjoint_positions=[0, 2])
    with pytest.raises(AdjointArgumentError, match=r"\(x, y\): expected 2 adjoint\(s\), got 3"):
        nadc.check_adjoint_args("k", (x, idx, y), (x, x, x), ["x", "idx", "y"],
                                adjoint_positions=[0, 2])


def test_adjoint_checks_accept_device_like_arrays():
    class CAI:
        def __init__(self, shape, typestr):
            self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                             "data": (0, False), "version": 3}
    nadc.check_adjoint_args("k", (CAI((4,), "<f8"), 2), (CAI((4,), "<f8"),), ["x", "n"])
    with pytest.raises(AdjointArgumentError, match="adjoint of x"):
        nadc.check_adjoint_args("k", (CAI((4,), "<f8"),), (CAI((4,), "<f4"),), ["x"])
    # NumPy scalars are not arrays: no adjoint for them.
    nadc.check_adjoint_args("k", (np.float64(1.0), np.zeros(3)), (np.zeros(3),))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_simulator_intrinsics_keep_a_flag(dtype):
    st = sim.adstack(dtype, 3)
    for v in (1, 0, 1):
        sim.push(st, v)
    assert sim.size(st) == 3 and not sim.overflowed(st)
    sim.push(st, 1)                     # past capacity: dropped, flagged, no exception
    assert sim.size(st) == 3 and sim.overflowed(st)
    assert [sim.pop(st) for _ in range(3)] == [dtype(1), dtype(0), dtype(1)]
    st2 = sim.adstack(dtype, 2)
    assert sim.pop(st2) == 0 and sim.top(st2) == 0 and sim.overflowed(st2)
    assert sim.size(st2) == 0


def test_simulator_refuses_heap_storage():
    with pytest.raises(ValueError, match="storage='frame'"):
        sim.adstack(np.float64, 4, "heap")


def test_intrinsics_for_the_real_target_are_the_package_functions():
    import numba_adstack
    assert not nadc.SIMULATOR
    for name in ("adstack", "push", "pop", "top", "size", "overflowed"):
        assert getattr(nadc, name) is getattr(numba_adstack, name)
        assert nadc.kernel_namespace()[name] is getattr(numba_adstack, name)


def test_ptx_local_depots_parses_each_function():
    ptx = """
.visible .entry _Z6kernelPd(
\t.param .u64 _Z6kernelPd_param_0
)
{
\t.local .align 8 .b8 \t__local_depot0[136];
}
.func  (.param .b64 func_retval0) helper(
)
{
\t.local .align 4 .b8 \t__local_depot1[28];
}
"""
    assert nadc.ptx_local_depots(ptx) == {"_Z6kernelPd": 136, "helper": 28}


def test_fake_current_device_is_restored():
    from numba.cuda import dispatcher
    saved = dispatcher.get_current_device
    with fake_current_device((9, 0)) as dev:
        assert dispatcher.get_current_device() is dev
        assert dev.compute_capability == (9, 0)
    assert dispatcher.get_current_device is saved


def test_local_memory_without_gpu_is_none():
    if nadc.have_gpu():
        pytest.skip("a GPU is present")
    assert nadc.local_memory_per_thread(object()) is None


def test_overflow_message_names_kernel_and_size():
    msg = nadc.overflow_message("step", 16)
    assert "'step'" in msg and "ad_stack_size=16" in msg and "N > 16" in msg
