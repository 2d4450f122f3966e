"""Taichi on the CPU: kernel() then kernel.grad(), adstack sized per workload."""
from . import module_available

NAME = "taichi"
REQUIRES = "taichi>=1.7,<1.8"


def available():
    return module_available("taichi")


def build(workload, args):
    import taichi as ti
    from ._taichi_style import build as build_kernels
    return build_kernels(ti, workload, args)
