"""Helpers for testing CUDA code without a GPU."""
import contextlib


class FakeDevice:
    """Stands in for the current CUDA device where only its compute capability is asked."""

    def __init__(self, compute_capability=(8, 0)):
        self.compute_capability = tuple(compute_capability)

    def __repr__(self):
        return "<FakeDevice cc=%d.%d>" % self.compute_capability


@contextlib.contextmanager
def fake_current_device(compute_capability=(8, 0)):
    """Replace ``numba.cuda.dispatcher.get_current_device`` inside the block.

    Without a driver, numba-cuda cannot compile a kernel that calls another jitted function:
    compiling the callee asks the current device for its compute capability. Inside this
    block it gets ``compute_capability`` (8.0 by default), so
    ``numba.cuda.compile_ptx(kernel, sig, cc=(8, 0))`` works for such kernels too.
    """
    from numba.cuda import dispatcher

    device = FakeDevice(compute_capability)
    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: device
    try:
        yield device
    finally:
        dispatcher.get_current_device = saved


def nvvm_available(cc=(8, 0)):
    """Can PTX be compiled here (libNVVM found), GPU or not?"""
    from numba import cuda, float64
    try:
        cuda.compile_ptx(lambda a: None, (float64[:],), cc=cc)
        return True
    except Exception:
        return False
