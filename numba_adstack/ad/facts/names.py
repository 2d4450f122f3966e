"""How a refusal names a value: by the user's variable, never by a name the compiler made.

Numba names the temporaries of an expression ``$194call.20`` and the SSA versions of a
variable ``w.1``; the inliner names a callee's variables ``helper_v30_s`` (its ``s``) and
its temporaries ``helper_v30__v38call_6``. A message that quotes one of them is rewritten
(:func:`in_user_names`): a version by its variable (``'w'``), a callee's variable with its
function (``'s' (in helper)``), and a temporary by the variable it is assigned to, or else
by what makes it (``the result of `np.spacing```).
"""
import re

import numpy as np
from numba.core import ir

# The inliner's name of variable ``var`` of function ``fn`` (numba.core.inline_closurecall).
_INLINED = re.compile(r"^(\w+?)_v\d+_(.+)$")
_QUOTED = re.compile(r"'([^'\s]+)'")


def is_generated(name):
    """Is ``name`` a compiler's temporary (of the function, or of a callee inlined)?"""
    while True:
        if name.startswith("$"):
            return True
        m = _INLINED.match(name)
        if m is None:
            return False
        name = m.group(2)
        if name.startswith("_v") or name.startswith("$"):
            return True


def user_variable(name):
    """``(variable, function or None)`` of a name that is not a temporary."""
    where = None
    m = _INLINED.match(name)
    while m is not None:
        where, name = m.group(1), m.group(2)
        m = _INLINED.match(name)
    base = name.split(".")[0]
    if where is not None:
        base = re.sub(r"_\d+$", "", base)    # (the inliner writes w.1 as w_1)
    return base, where


def describe(facts, name, depth=0):
    """How a message names the IR value ``name``: ``'w'``, ``'s' (in helper)``, or what
    makes a temporary."""
    if not is_generated(name):
        base, where = user_variable(name)
        return "%r" % base if where is None else "%r (in %s)" % (base, where)
    for _, stmt in facts.uses.get(name, ()):
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var) and \
                not is_generated(stmt.target.name):
            return describe(facts, stmt.target.name)
    e = facts.def_expr(name)
    if isinstance(e, ir.Expr) and e.op == "call":
        return "the result of `%s`" % _called(facts, e)
    if isinstance(e, ir.Expr) and e.op in ("getitem", "static_getitem") and depth < 3:
        return "an item of %s" % describe(facts, e.value.name, depth + 1)
    if isinstance(e, ir.Var) and depth < 3:
        return describe(facts, e.name, depth + 1)
    loc = facts.def_loc(name) if hasattr(facts, "def_loc") else None
    line = getattr(loc, "line", None)
    return "the value computed on line %d" % line if line else "a value it computes"


def _called(facts, e):
    fn = facts.resolve_global(e.func)
    if fn is None:
        d = facts.def_expr(e.func.name)
        if isinstance(d, ir.Expr) and d.op == "getattr":
            return ".%s()" % d.attr
        return "a call"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__name__", None) or str(fn)
    if isinstance(fn, np.ufunc) or module.startswith("numpy"):
        return ("np.linalg." if module.startswith("numpy.linalg") else "np.") + name
    if module in ("math", "cmath"):
        return "%s.%s" % (module, name)
    return name


def in_user_names(facts, text):
    """``text`` with every quoted IR name replaced by :func:`describe`'s."""
    def repl(m):
        name = m.group(1)
        if name not in facts.typemap and name not in facts.defs:
            return m.group(0)
        return describe(facts, name)
    return _QUOTED.sub(repl, text)
