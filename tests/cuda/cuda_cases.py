"""Hand-written adstack kernels run end to end: gradients against analytic values, overflow
and recovery, branch flags, device functions, kernels compiled from source text.

The same cases run in the CUDA simulator (tests/cuda/_cuda_sim_cases.py, from
test_cuda_simulator.py) and on a real GPU (test_cuda_device.py, skipped without one).
"""
import numpy as np
from numba import cuda

import numba_adstack.cuda as nadc
from numba_adstack import AdStackOverflowError, AdjointArgumentError, NonDifferentiableError

import cuda_grad_kernels as G
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


# ---------------------------------------------------------------- nad.cuda.grad_jit
# Kernels whose backward numba_adstack generates (tests/cuda/cuda_grad_kernels.py). One block of
# 32 threads, a few steps: the simulator runs every thread in Python.

GRID, BLOCK = 1, 32


def _grad_inputs(seed, lo=-1.0, hi=1.5):
    rng = np.random.default_rng(seed)
    x = rng.uniform(lo, hi, GRID * BLOCK)
    y_bar = rng.uniform(0.5, 1.5, GRID * BLOCK)
    return x, y_bar


def case_grad_jit_recurrence():
    x, y_bar = _grad_inputs(10)
    w, n = np.array([1.3]), 6
    x0, seed = x.copy(), y_bar.copy()
    y = np.zeros_like(x)
    G.recurrence[GRID, BLOCK](x, w, y, n)
    np.testing.assert_allclose(y, G.recurrence_numpy(x, w[0], n), rtol=1e-12)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    G.recurrence.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar)
    # Against the chain rule in NumPy ...
    _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, seed)
    np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)
    # ... and against central differences of the NumPy forward.
    fd_x = seed * G.fd_elementwise(lambda a: G.recurrence_numpy(a, w[0], n), x)
    fd_w = G.fd_scalar(lambda a: float(np.sum(seed * G.recurrence_numpy(x, a, n))), w[0])
    np.testing.assert_allclose(x_bar, fd_x, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w_bar[0], fd_w, rtol=1e-6)
    # The inputs are untouched; the seed is consumed: y[i] was overwritten, so the adjoint
    # of its old value, which is what y_bar holds after the backward, is 0.
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y_bar, np.zeros_like(y_bar))


def case_grad_jit_checkpoint_marker_ignored_with_a_warning():
    # A kernel keeps each thread's history in local memory: the marker warns, naming the
    # function and the loop's line, and the gradient is the unmarked one's.
    import warnings
    from numba_adstack import CheckpointIgnoredWarning
    x, y_bar = _grad_inputs(11)
    w, n = np.array([0.9]), 5
    seed = y_bar.copy()
    y = np.zeros_like(x)
    G.recurrence_marked[GRID, BLOCK](x, w, y, n)
    np.testing.assert_allclose(y, G.recurrence_numpy(x, w[0], n), rtol=1e-12)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        G.recurrence_marked.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar)
    said = [str(m.message) for m in got if issubclass(m.category, CheckpointIgnoredWarning)]
    assert len(said) == 1 and "recurrence_marked" in said[0] and "line" in said[0], said
    fd_x = seed * G.fd_elementwise(lambda a: G.recurrence_numpy(a, w[0], n), x)
    fd_w = G.fd_scalar(lambda a: float(np.sum(seed * G.recurrence_numpy(x, a, n))), w[0])
    np.testing.assert_allclose(x_bar, fd_x, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w_bar[0], fd_w, rtol=1e-6)


def case_grad_jit_update_in_place():
    # y[i] += v: the seed y_bar passes through (y's old value counts in the new one).
    x, y_bar = _grad_inputs(19)
    n = 3
    y0 = np.linspace(-1.0, 1.0, x.size)
    y = y0.copy()
    G.add_into[GRID, BLOCK](x, y, n)
    np.testing.assert_allclose(y, y0 + G.private_numpy(x, n), rtol=1e-12)
    seed = y_bar.copy()
    x_bar = np.zeros_like(x)
    G.add_into.grad[GRID, BLOCK](x, y, n, x_bar, y_bar)
    fd = G.fd_elementwise(lambda a: G.private_numpy(a, n), x)
    np.testing.assert_allclose(x_bar, seed * fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(y_bar, seed, rtol=1e-15)


def case_grad_jit_read_after_own_write():
    # y[i] = 2 x; y[i] = y[i] x + sin(y[i]): the backward runs after the forward launch,
    # when y holds the final values; the read of y[i] is the value stored just before.
    x, y_bar = _grad_inputs(23)
    y = np.zeros_like(x)
    G.overwrite_then_read[GRID, BLOCK](x, y)
    np.testing.assert_allclose(y, 2 * x * x + np.sin(2 * x), rtol=1e-12)
    seed = y_bar.copy()
    x_bar = np.zeros_like(x)
    G.overwrite_then_read.grad[GRID, BLOCK](x, y, x_bar, y_bar)
    np.testing.assert_allclose(x_bar, seed * (4 * x + 2 * np.cos(2 * x)), rtol=1e-12)
    # y[i] += x^2; y[i] *= 2: the seed passes through, nothing reads y's old value
    y0 = np.linspace(-1.0, 1.0, x.size)
    y, y_bar, x_bar = y0.copy(), seed.copy(), np.zeros_like(x)
    G.add_then_double[GRID, BLOCK](x, y)
    G.add_then_double.grad[GRID, BLOCK](x, y, x_bar, y_bar)
    np.testing.assert_allclose(x_bar, seed * 4 * x, rtol=1e-12)
    np.testing.assert_allclose(y_bar, 2 * seed, rtol=1e-12)
    # y[i] *= x[i]: x's adjoint needs y's old value, gone after the launch: refused
    try:
        G.scale_in_place.grad[GRID, BLOCK](x, y, np.zeros_like(x), seed.copy())
    except NonDifferentiableError as e:
        assert "scale_in_place" in str(e) and "also writes into" in str(e), str(e)
    else:
        raise AssertionError("a read of an overwritten element was differentiated")


def case_grad_jit_shared_parameters():
    # w[0], w[1], w[2] are read by all 32 threads of 2 blocks: their adjoints are the
    # atomic sums of 32 contributions each.
    x, y_bar = _grad_inputs(11)
    w = np.array([0.7, 1.2, -0.4])
    seed = y_bar.copy()
    y = np.zeros_like(x)
    G.shared_params[2, 16](x, w, y)
    np.testing.assert_allclose(y, w[1] * np.exp(w[0] * x) + w[2], rtol=1e-12)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    G.shared_params.grad[2, 16](x, w, y, x_bar, w_bar, y_bar)
    x_bar_ref, w_bar_ref = G.shared_params_grads(x, w, seed)
    np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-12)
    np.testing.assert_allclose(w_bar, w_bar_ref, rtol=1e-12)


def case_grad_jit_table_parameters():
    # W[1, 0] has a constant index (each thread sums its contributions, then one atomic);
    # W[0, j % 3] does not (an atomic per contribution). Both against central differences.
    x, y_bar = _grad_inputs(12, -0.8, 0.8)
    W = np.array([[0.7, 1.1, -0.5], [0.3, 2.0, 2.0]])
    n, seed = 5, y_bar.copy()
    y = np.zeros_like(x)
    G.table_recurrence[GRID, BLOCK](x, W, y, n)
    np.testing.assert_allclose(y, G.table_recurrence_numpy(x, W, n), rtol=1e-12)
    x_bar, W_bar = np.zeros_like(x), np.zeros_like(W)
    G.table_recurrence.grad[GRID, BLOCK](x, W, y, n, x_bar, W_bar, y_bar)
    fd_x = seed * G.fd_elementwise(lambda a: G.table_recurrence_numpy(a, W, n), x)
    np.testing.assert_allclose(x_bar, fd_x, rtol=1e-6, atol=1e-9)
    for k in np.ndindex(W.shape):
        def loss(a, k=k):
            Wk = W.copy()
            Wk[k] = a
            return float(np.sum(seed * G.table_recurrence_numpy(x, Wk, n)))
        np.testing.assert_allclose(W_bar[k], G.fd_scalar(loss, W[k]), rtol=1e-6, atol=1e-9)


def case_grad_jit_local_array_state():
    x, y_bar = _grad_inputs(21, -0.5, 0.8)
    w = np.array([1.1, 0.9, 1.05])
    n = 4
    seed = y_bar.copy()
    y = np.zeros_like(x)
    G.local_state[GRID, BLOCK](x, w, y, n)
    np.testing.assert_allclose(y, G.local_state_numpy(x, w, n), rtol=1e-12)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    G.local_state.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar)
    fd_x = seed * G.fd_elementwise(lambda a: G.local_state_numpy(a, w, n), x)
    np.testing.assert_allclose(x_bar, fd_x, rtol=1e-6, atol=1e-9)
    for k in range(3):
        def total(a, k=k):
            wk = w.copy()
            wk[k] = a
            return float(np.sum(seed * G.local_state_numpy(x, wk, n)))
        np.testing.assert_allclose(w_bar[k], G.fd_scalar(total, w[k]), rtol=1e-6)


def case_grad_jit_shared_array_refused():
    x, y_bar = _grad_inputs(22)
    y = np.zeros_like(x)
    try:
        G.shared_scratch.grad[GRID, BLOCK](x, y, np.zeros_like(x), y_bar)
    except NonDifferentiableError as e:
        assert "shared_scratch" in str(e) and "cuda.shared.array" in str(e), str(e)
    else:
        raise AssertionError("a cuda.shared.array on the gradient path was accepted")


def case_grad_jit_shared_input_element():
    # Threads 2k and 2k+1 read x[k]: x_bar[k] sums both threads' adjoints.
    x, _ = _grad_inputs(12)
    x = x[:BLOCK // 2]
    y = np.zeros(BLOCK)
    y_bar = np.linspace(0.5, 1.5, BLOCK)
    seed = y_bar.copy()
    n = 4
    G.shared_pair[GRID, BLOCK](x, y, n)
    x_bar = np.zeros_like(x)
    G.shared_pair.grad[GRID, BLOCK](x, y, n, x_bar, y_bar)

    def fwd(a):
        v = a.copy()
        for _ in range(n):
            v = np.sin(v)
        return v
    d = G.fd_elementwise(fwd, x)
    np.testing.assert_allclose(x_bar, (seed[0::2] + seed[1::2]) * d, rtol=1e-6, atol=1e-9)


def case_grad_jit_branch_and_while():
    # The trip count (0 to 20) and the branch taken at each step differ between threads.
    x = np.linspace(0.05, 4.5, GRID * BLOCK)
    y = np.zeros_like(x)
    G.branch_while[GRID, BLOCK](x, y)
    ref = np.array([G.branch_while_python(a) for a in x])
    np.testing.assert_allclose(y, ref, rtol=1e-12)
    y_bar = np.linspace(1.0, 2.0, x.size)
    seed = y_bar.copy()
    x_bar = np.zeros_like(x)
    G.branch_while.grad[GRID, BLOCK](x, y, x_bar, y_bar)
    fd = np.array([G.fd_scalar(G.branch_while_python, a, 1e-7) for a in x])
    np.testing.assert_allclose(x_bar, seed * fd, rtol=1e-5, atol=1e-8)
    assert np.all(x_bar[x >= 4.0] == seed[x >= 4.0])  # no iteration: identity


def case_grad_jit_device_function():
    x, y_bar = _grad_inputs(13)
    w, n = np.array([0.9]), 5
    seed = y_bar.copy()
    y = np.zeros_like(x)
    G.calls_device[GRID, BLOCK](x, w, y, n)
    np.testing.assert_allclose(y, G.calls_device_numpy(x, w[0], n), rtol=1e-12)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    G.calls_device.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar)
    fd_x = seed * G.fd_elementwise(lambda a: G.calls_device_numpy(a, w[0], n), x)
    fd_w = G.fd_scalar(lambda a: float(np.sum(seed * G.calls_device_numpy(x, a, n))), w[0])
    np.testing.assert_allclose(x_bar, fd_x, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(w_bar[0], fd_w, rtol=1e-6)


def case_grad_jit_overflow_then_recover():
    x, y_bar = _grad_inputs(14)
    w = np.array([1.1])
    y = np.zeros_like(x)
    k = G.make_recurrence(8)
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    try:
        k.grad[GRID, BLOCK](x, w, y, 9, x_bar, w_bar, y_bar.copy())
    except AdStackOverflowError as e:
        msg = str(e)
        assert "'recurrence'" in msg and "ad_stack_size=8" in msg, msg
    else:
        raise AssertionError("no AdStackOverflowError for 9 steps with ad_stack_size=8")
    # The flag was reset: the next launch that fits is right.
    for n in (8, 3):
        x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
        k.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar.copy())
        _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
        np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)


def _refused(launch, *args, match=()):
    try:
        launch(*args)
    except AdjointArgumentError as e:
        msg = str(e)
        for m in match:
            assert m in msg, (m, msg)
    else:
        raise AssertionError("wrong adjoint arguments were accepted")


def case_grad_jit_wrong_adjoints_refused():
    x, y_bar = _grad_inputs(15)
    w, y, n = np.array([1.1]), np.zeros_like(x), 3
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    seed = y_bar.copy()
    launch = G.recurrence.grad[GRID, BLOCK]
    # count: one adjoint missing, one too many
    _refused(launch, x, w, y, n, x_bar, w_bar, match=("recurrence", "expected 3", "got 2",
                                                      "x_bar, w_bar, y_bar"))
    _refused(launch, x, w, y, n, x_bar, w_bar, y_bar, np.zeros(1),
             match=("expected 3", "got 4"))
    # shape, dtype, not an array
    _refused(launch, x, w, y, n, x_bar[:-1], w_bar, y_bar, match=("adjoint of x", "(31,)"))
    _refused(launch, x, w, y, n, x_bar, w_bar, y_bar.astype(np.float32),
             match=("adjoint of y", "float32"))
    _refused(launch, x, w, y, n, x_bar, 0.0, y_bar, match=("adjoint of w", "float"))
    # nothing was launched: the adjoints are as they were (a launch consumes the seed)
    np.testing.assert_array_equal(y_bar, seed)
    assert not x_bar.any() and not w_bar.any()


def case_grad_jit_too_few_arguments_refused():
    x, _ = _grad_inputs(15)
    w = np.array([1.1])
    # Fewer arguments than the kernel takes: refused as the adjoint count is.
    _refused(G.recurrence.grad[GRID, BLOCK], x, w, match=("recurrence", "4 argument"))


def case_grad_jit_host_and_device_arrays():
    x, y_bar = _grad_inputs(16)
    w, n = np.array([1.2]), 5
    _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
    # all on the device
    d_x, d_w, d_y = cuda.to_device(x), cuda.to_device(w), cuda.to_device(np.zeros_like(x))
    d_xb, d_wb = cuda.to_device(np.zeros_like(x)), cuda.to_device(np.zeros_like(w))
    d_yb = cuda.to_device(y_bar)
    G.recurrence[GRID, BLOCK](d_x, d_w, d_y, n)
    G.recurrence.grad[GRID, BLOCK](d_x, d_w, d_y, n, d_xb, d_wb, d_yb)
    np.testing.assert_allclose(d_xb.copy_to_host(), x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(d_wb.copy_to_host()[0], w_bar_ref, rtol=1e-10)
    # mixed: inputs on the device, adjoints on the host
    x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
    G.recurrence.grad[GRID, BLOCK](d_x, d_w, d_y, n, x_bar, w_bar, y_bar.copy())
    np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)


def case_grad_jit_accumulates_across_launches():
    x, y_bar = _grad_inputs(17)
    w, n = np.array([0.8]), 4
    y = np.zeros_like(x)
    _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
    x_bar, w_bar = np.full_like(x, 0.25), np.array([-1.0])
    for k in (1, 2):
        # a fresh seed each time (the backward consumes it); x_bar, w_bar are added to
        G.recurrence.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar.copy())
        np.testing.assert_allclose(x_bar, 0.25 + k * x_bar_ref, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(w_bar[0], -1.0 + k * w_bar_ref, rtol=1e-10)


def case_grad_jit_inspect_adjoint():
    x, y_bar = _grad_inputs(18)
    w, y = np.array([1.0]), np.zeros_like(x)
    src = G.recurrence.inspect_adjoint(x, w, y, 3)
    assert src.startswith("def recurrence_backward(x, w, y, n, x_bar, w_bar, y_bar, _flag)")
    # sin(v) and its kept derivative cos(v), one of each per step, share one stack.
    assert "adstack(np.float64, %d)" % (2 * G.SIZE) in src
    assert "cuda.atomic.add(w_bar" in src and "x_bar[i] +=" in src
    assert "cuda.atomic.add(x_bar" not in src


# ---------------------------------------------------------------- stacks sized at launch

class _local_budget:
    """Set numba_adstack.config.CUDA_LOCAL_BUDGET_BYTES inside the block."""

    def __init__(self, nbytes):
        self.nbytes = nbytes

    def __enter__(self):
        from numba_adstack import config
        self.saved = config.CUDA_LOCAL_BUDGET_BYTES
        config.CUDA_LOCAL_BUDGET_BYTES = self.nbytes

    def __exit__(self, *exc):
        from numba_adstack import config
        config.CUDA_LOCAL_BUDGET_BYTES = self.saved


def case_grad_jit_sized_at_launch_local_and_global():
    x, y_bar = _grad_inputs(30)
    w = np.array([1.2])
    k = G.recurrence_auto
    y = np.zeros_like(x)
    for budget, local in ((1 << 20, True), (16, False)):
        with _local_budget(budget):
            for n in (0, 3, 40, 300):          # 300: past any ad_stack_size the old default
                x_bar, w_bar = np.zeros_like(x), np.zeros_like(w)
                k.grad[GRID, BLOCK](x, w, y, n, x_bar, w_bar, y_bar.copy())
                _, x_bar_ref, w_bar_ref = K.recurrence_reference(x, w[0], n, y_bar)
                np.testing.assert_allclose(x_bar, x_bar_ref, rtol=1e-10, atol=1e-14)
                np.testing.assert_allclose(w_bar[0], w_bar_ref, rtol=1e-10)
                bw = k.backward((x, w, y, n))
                assert bw.local is local, (budget, n, bw.local)
                assert set(bw.capacities.values()) == {max(n, 1)}, bw.capacities
    assert "launch_stack(" in k.inspect_adjoint(x, w, y, 3)


def case_grad_jit_nested_loops_sized_at_launch():
    x, y_bar = _grad_inputs(31, -0.5, 0.9)
    y = np.zeros_like(x)
    for budget in (1 << 20, 16):
        with _local_budget(budget):
            for n, m in ((1, 1), (2, 5), (7, 3), (12, 12)):
                x_bar = np.zeros_like(x)
                G.nested_auto.grad[GRID, BLOCK](x, y, n, m, x_bar, y_bar.copy())
                fd = G.fd_elementwise(lambda a: G.nested_numpy(a, n, m), x)
                np.testing.assert_allclose(x_bar, y_bar * fd, rtol=1e-6, atol=1e-9)
                bw = G.nested_auto.backward((x, y, n, m))
                assert max(bw.capacities.values()) == max(n * (m - 1), 1), bw.capacities


def case_grad_jit_2d_launch_global_stacks():
    rng = np.random.default_rng(32)
    x = rng.uniform(-1.0, 1.0, (6, 10))
    y = np.zeros_like(x)
    y_bar = rng.uniform(0.5, 1.5, x.shape)
    n = 5
    with _local_budget(16):
        x_bar = np.zeros_like(x)
        G.grid2d_auto.grad[(2, 3), (4, 4)](x, y, n, x_bar, y_bar.copy())
        assert G.grid2d_auto.backward((x, y, n)).local is False
    fd = G.fd_elementwise(lambda a: G.grid2d_numpy(a, n), x)
    np.testing.assert_allclose(x_bar, y_bar * fd, rtol=1e-6, atol=1e-9)


def case_grad_jit_while_cap_overflow_then_recover():
    x, y_bar = _grad_inputs(33, -1.0, 3.0)
    y = np.zeros_like(x)
    short = G.make_branch_while(3)
    x_bar = np.zeros_like(x)
    try:
        short.grad[GRID, BLOCK](x, y, x_bar, y_bar.copy())
    except AdStackOverflowError as e:
        msg = str(e)
        assert "'branch_while'" in msg and "while_cap=3" in msg, msg
        assert msg.count("while_cap=N") == 1, msg
    else:
        raise AssertionError("no overflow for a while loop past while_cap=3")
    x_bar = np.zeros_like(x)
    G.make_branch_while(G.MAX_ITER).grad[GRID, BLOCK](x, y, x_bar, y_bar.copy())
    fd = np.array([G.fd_scalar(G.branch_while_python, a, 1e-7) for a in x])
    np.testing.assert_allclose(x_bar, y_bar * fd, rtol=1e-5, atol=1e-8)


def _pair_forces(x, k, w, n):
    f, dk = np.zeros_like(x), np.zeros_like(x)
    G.pair_forces[GRID, BLOCK](x, k, w, n, f, dk)
    return f, dk


def case_device_function_grad_called_per_thread():
    x, _ = _grad_inputs(40, -1.0, 1.0)
    w, k, n = np.array([0.1, -0.2, 0.3]), 0.9, 7
    f, dk = _pair_forces(x, k, w, n)
    fd_x = np.array([G.fd_scalar(lambda a: G.pair_energy_python(a, k, w, n), a) for a in x])
    fd_k = np.array([G.fd_scalar(lambda b: G.pair_energy_python(a, b, w, n), k) for a in x])
    np.testing.assert_allclose(-f, fd_x, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dk, fd_k, rtol=1e-6, atol=1e-9)
    cpu = [G.pair_energy_cpu.grad(a, k, w, n) for a in x]
    np.testing.assert_allclose(-f, [g[0] for g in cpu], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dk, [g[1] for g in cpu], rtol=1e-12, atol=1e-15)
    e, f2 = np.zeros_like(x), np.zeros_like(x)
    G.pair_energy_and_force[GRID, BLOCK](x, k, w, n, e, f2)
    np.testing.assert_allclose(e, [G.pair_energy_python(a, k, w, n) for a in x], rtol=1e-13)
    np.testing.assert_array_equal(f2, f)
    if nadc.SIMULATOR:      # d.grad is a Python function there: its None entries
        g = G.pair_energy.grad(x[0], k, w, n)
        assert g[2] is None and g[3] is None and g[0] == -f[0] and g[1] == dk[0], g


def case_device_function_grad_overflow_is_nan_then_recovers():
    x, _ = _grad_inputs(41, -1.0, 1.0)
    w, k = np.array([0.1, -0.2]), 0.9
    f, dk = _pair_forces(x, k, w, 4 * G.SIZE)        # past ad_stack_size
    assert np.all(np.isnan(f)) and np.all(np.isnan(dk))
    f, dk = _pair_forces(x, k, w, G.SIZE)            # fits: each call has fresh stacks
    cpu = [G.pair_energy_cpu.grad(a, k, w, G.SIZE) for a in x]
    np.testing.assert_allclose(-f, [g[0] for g in cpu], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(dk, [g[1] for g in cpu], rtol=1e-12, atol=1e-15)


def case_grad_jit_zero_adjoint_contributes_zero():
    # sqrt(0) whose value the thread does not read: its adjoint is 0, its partial
    # infinite; the backward's and the tangent kernel's contributions are 0, not NaN.
    x, y_bar = _grad_inputs(43, 0.0, 1.0)
    x[::4] = 0.0
    seed, slope = y_bar.copy(), G.root_where_large_slope(x)
    y = np.zeros_like(x)
    G.root_where_large[GRID, BLOCK](x, y)
    x_bar = np.zeros_like(x)
    G.root_where_large.grad[GRID, BLOCK](x, y, x_bar, y_bar)
    np.testing.assert_allclose(x_bar, seed * slope, rtol=1e-12)
    assert np.all(x_bar[::4] == 0.0)
    # (a zero tangent at sqrt(0): the simulator's Python floats raise on 0.5 / 0.0, which
    # the guard leaves unevaluated; the device gives inf, unread)
    dx, dy = np.linspace(-1.0, 1.0, x.size), np.zeros_like(x)
    dx[::4] = 0.0
    G.root_where_large.jvp[GRID, BLOCK](x, y, dx, dy)
    np.testing.assert_allclose(dy, slope * dx, rtol=1e-12)


#: Cases known to fail, by name: (where, reason); where is "simulator" or "everywhere".
#: test_cuda_simulator.py and test_cuda_device.py mark them xfail(strict=True).
XFAIL = {}

CASES = {name[len("case_"):]: fn for name, fn in globals().items()
         if name.startswith("case_")}


