"""Calling a gradient: the ``grad_jit`` object (:mod:`.api`), the compiled backward of one
signature (:mod:`.backward`), the driver of the phases (:mod:`.rewrite`), pullbacks
(:mod:`.vjp`), gradients called from jitted code (:mod:`.jitted`), derived transforms
(:mod:`.derived`: hvp, hessian, jacobian) and the gradient cache (:mod:`.cache`)."""
