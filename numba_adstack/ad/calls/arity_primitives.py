"""Primitives made per number of arguments, for calls the capture rewrites rather than
inlines: ``<prefix>_<n>(fixed..., a0, ..., a<n-1>)`` is a Python stub that Numba types by
an ``@overload`` and the rewrite differentiates by its rule entries, one per argument
(second-order calls, :mod:`.second_order`; checkpointed helper calls,
:mod:`.checkpoint_call`).

Each primitive is also an attribute of the module that owns it, so that a backward loaded
from the disk cache in a new process finds it again by name (the module's ``__getattr__``
calls :meth:`ArityPrimitives.by_name`).
"""
import sys
import threading

from numba.core.extending import overload
from numba.core.registry import cpu_target

from . import implicit
from .. import rules as R
from ..generated_source import exec_source
from ..rules.array_rules import ARRAY_RULES, ArrayRule
from ..rules.template import substitute

_lock = threading.RLock()


class ArityPrimitives:
    """The primitives ``<prefix>_<n>`` of one module.

    ``fixed``: the names of the leading parameters (the function called, a site...), which
    get no adjoint; ``typer(*fixed, args)``: the ``@overload`` typing of a call, ``args`` the
    tuple of the other arguments; ``adjoint(args, j)``: the rule template of argument ``j``
    (None: it gets no adjoint), ``args`` the source of the tuple of the arguments'
    placeholders."""

    def __init__(self, module, prefix, fixed, typer, adjoint):
        self.module, self.prefix, self.fixed = module, prefix, tuple(fixed)
        self.typer, self.adjoint = typer, adjoint
        self._made = {}

    def get(self, n):
        """The primitive of ``n`` arguments, made once."""
        fn = self._made.get(n)
        if fn is None:
            with _lock:
                fn = self._made.get(n)
                if fn is None:
                    fn = self._made[n] = self._make(n)
                    setattr(sys.modules[self.module], fn.__name__, fn)
        return fn

    def by_name(self, name):
        """The primitive named ``name``, or an ``AttributeError`` as a module gives."""
        head = self.prefix + "_"
        if name.startswith(head) and name[len(head):].isdigit():
            return self.get(int(name[len(head):]))
        raise AttributeError("module %r has no attribute %r" % (self.module, name))

    def _make(self, n):
        name = "%s_%d" % (self.prefix, n)
        params = ["a%d" % j for j in range(n)]
        signature = ", ".join(list(self.fixed) + params)
        fn = exec_source(name, "def %s(%s):\n    raise NotImplementedError('%s is called from "
                         "Numba code only')\n" % (name, signature, name), {}, "primitive")
        fn.__module__ = self.module
        # Typing generated with the primitive's own parameters, as Numba binds them.
        typer = exec_source("typer", "def typer(%s):\n    return _typer(%s(%s,))\n" % (
            signature, "".join(p + ", " for p in self.fixed), ", ".join(params)),
            {"_typer": self.typer}, "primitive")
        overload(fn, prefer_literal=True, inline="always")(typer)
        # Registered now, after Numba installed its registries: the capture types it next.
        cpu_target.typing_context.refresh()
        args = ", ".join("{%s}" % p for p in params)
        templates = [self.adjoint(args, j) for j in range(n)]
        ARRAY_RULES[fn] = ArrayRule(self.fixed + tuple(params), dict(
            {p: None for p in self.fixed}, **dict(zip(params, templates))))
        by_position = {p: "{%d}" % k for k, p in enumerate(self.fixed)}
        by_position.update({p: "{%d}" % (j + len(self.fixed)) for j, p in enumerate(params)},
                           g="{g}")
        R.CALL_RULES[fn] = (None,) * len(self.fixed) + tuple(
            None if t is None else substitute(t, by_position) for t in templates)
        implicit._PRIMITIVES[id(fn)] = fn          # called as it is, never inlined
        return fn
