"""Entry point named in setup.cfg (``numba_cuda_extensions``): numba-cuda calls ``init``
before its first compilation, so the CUDA lowering of the adstack intrinsics is registered
even when only ``numba_adstack`` was imported."""


def init():
    import numba_adstack.cuda  # noqa: F401
