"""Hand-written adstack kernels run end to end: gradients against analytic values, overflow
and recovery, branch flags, device functions, kernels compiled from source text.

The same cases run in the CUDA simulator (tests/_cuda_sim_cases.py, from
test_cuda_simulator.py) and on a real GPU (test_cuda_device.py, skipped without one).
"""
import numpy as np
from numba import cuda

import numba_adstack.cuda as nadc
from numba_adstack import AdStackOverflowError

import cuda_kernels as K

BLOCKS, THREADS = 2, 16
N_THREADS = BLOCKS * THREADS


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, N_THREADS)
    w = np.array([1.3])
    return x, w


def _recurrence_grad_kernel():
    return nadc.OverflowCheckedKernel(cuda.jit(K.recurrence_backward), "recurrence_backward",
                                      K.CAP, n_args=4, arg_names=["x", "w", "y", "n"])


def case_recurrence_gradient():
    x, w = _inputs()
    n = 12
    y = np.zeros_like(x)
    cuda.jit(K.recurrence_forward)[BLOCKS, THREADS](x, w, y, n)
    y_bar = np.linspace(0.5, 1.5, N_THREADS)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    _recurrence_grad_kernel()[BLOCKS, THREADS](x, w, y, n, x_bar, w_bar, y_bar)
    y_ref, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
    np.testing.assert_allclose(y, y_ref, rtol=1e-12)
    np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
    # w[0] is read by every thread: its adjoint is the atomic sum over all of them.
    np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)
    # Adjoints of inputs are accumulated into (+=): a second launch doubles them.
    _recurrence_grad_kernel()[BLOCKS, THREADS](x, w, y, n, x_bar, w_bar, y_bar)
    np.testing.assert_allclose(x_bar, 2 * x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(w_bar[0], 2 * w_bar_ref, rtol=1e-10)


def case_device_arrays():
    x, w = _inputs(1)
    n = 5
    y_bar = np.ones_like(x)
    d = [cuda.to_device(a) for a in (x, w, np.zeros_like(x))]
    dxb, dwb = cuda.to_device(np.zeros_like(x)), cuda.to_device(np.zeros_like(w))
    _recurrence_grad_kernel()[BLOCKS, THREADS](*d, n, dxb, dwb, cuda.to_device(y_bar))
    _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
    np.testing.assert_allclose(dxb.copy_to_host(), x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dwb.copy_to_host()[0], w_bar_ref, rtol=1e-10)


def case_overflow_then_recover():
    x, w = _inputs(2)
    k = _recurrence_grad_kernel()
    y_bar = np.ones_like(x)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    try:
        k[BLOCKS, THREADS](x, w, np.zeros_like(x), K.CAP + 4, x_bar, w_bar, y_bar)
    except AdStackOverflowError as e:
        msg = str(e)
        assert "recurrence_backward" in msg and "ad_stack_size=%d" % K.CAP in msg, msg
    else:
        raise AssertionError("no AdStackOverflowError for %d pushes on a stack of %d"
                             % (K.CAP + 4, K.CAP))
    # The flag was reset: a launch that fits is right, with the same launcher.
    n = K.CAP
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    k[BLOCKS, THREADS](x, w, np.zeros_like(x), n, x_bar, w_bar, y_bar)
    _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
    np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)


def case_empty_pop_sets_flag():
    x = np.arange(4.0)
    out = np.full_like(x, -1.0)
    k = nadc.OverflowCheckedKernel(cuda.jit(K.empty_pop), "empty_pop")
    try:
        k[1, 4](x, out)
    except AdStackOverflowError as e:
        assert "empty_pop" in str(e), str(e)
    else:
        raise AssertionError("pop on an empty stack did not raise the flag")
    np.testing.assert_array_equal(out, x)  # pop and top of an empty stack read 0


def case_branch_flags_on_a_bool_stack():
    x = np.linspace(0.0, 1.0, 8)
    n = 6
    out = np.zeros_like(x)
    k = nadc.OverflowCheckedKernel(cuda.jit(K.two_stacks), "two_stacks", K.CAP)
    k[1, 8](x, n, out)
    for i, v in enumerate(x):
        hist = []
        for _ in range(n):
            hist.append(v)
            v = v * 0.5 if v > 0.5 else v * 1.5 + 0.1
        assert abs(out[i] - sum(u for u in hist if u > 0.5)) < 1e-12, (i, out[i])
    # 8 pushes on the bool stack of 7: the flag, and the error.
    try:
        k[1, 8](x, 8, out)
    except AdStackOverflowError:
        pass
    else:
        raise AssertionError("no overflow for 8 pushes on a stack of 7")


def case_device_function():
    x, w = _inputs(3)
    y = np.zeros_like(x)
    cuda.jit(K.calls_device)[BLOCKS, THREADS](x, w, y, 2)
    ref = x.copy()
    for _ in range(6):
        ref = np.sin(ref) * w[0]
    np.testing.assert_allclose(y, ref, rtol=1e-12)


BACKWARD_SOURCE = '''
def sinrec_backward(x, w, y, n, x_bar, w_bar, y_bar, flag):
    i = cuda.grid(1)
    if i < x.shape[0]:
        st = adstack(np.float64, AD_STACK_SIZE)
        v = x[i]
        for _ in range(n):
            push(st, v)
            v = math.sin(v) * w[0]
        v_bar = y_bar[i]
        for _ in range(n):
            v = pop(st)
            cuda.atomic.add(w_bar, 0, v_bar * math.sin(v))
            v_bar = v_bar * w[0] * math.cos(v)
        x_bar[i] += v_bar
        if overflowed(st):
            flag[0] = 1
'''


def case_kernel_from_source():
    disp = nadc.compile_kernel_source(BACKWARD_SOURCE, "sinrec_backward",
                                      {"AD_STACK_SIZE": 8})
    k = nadc.OverflowCheckedKernel(disp, "sinrec", 8, n_args=4, arg_names=["x", "w", "y", "n"])
    x, w = _inputs(4)
    y_bar = np.ones_like(x)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    k[BLOCKS, THREADS](x, w, np.zeros_like(x), 7, x_bar, w_bar, y_bar)
    _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], 7, y_bar)
    np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)
    try:
        k[BLOCKS, THREADS](x, w, np.zeros_like(x), 9, x_bar, w_bar, y_bar)
    except AdStackOverflowError as e:
        assert "'sinrec'" in str(e) and "ad_stack_size=8" in str(e), str(e)
    else:
        raise AssertionError("no overflow for 9 pushes on a stack of 8")


CASES = {name[len("case_"):]: fn for name, fn in globals().items()
         if name.startswith("case_")}


