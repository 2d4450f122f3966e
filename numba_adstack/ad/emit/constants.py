"""Constants of the generated source."""

# What a scalar adjoint is reset to.  ``-0.0 + x`` is ``x`` for every x, so LLVM folds the
# first ``x_bar += ...`` after a reset into a plain assignment; ``0.0 + x`` it may not fold
# (it turns -0.0 into 0.0), and the extra adds then sit on every dependency chain.
ZERO = -0.0
