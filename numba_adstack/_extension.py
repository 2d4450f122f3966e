"""Entry point named in setup.cfg (``numba_extensions``): Numba calls ``init`` when it loads
extensions, so the adstack typing and lowering are registered however Numba is imported."""


def init():
    import numba_adstack  # noqa: F401  (importing the package registers everything)
