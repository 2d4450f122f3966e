"""Replacing one call statement of the untyped IR by a sequence of statements.

The capture rewrites a few calls into primitives before typing (``checkpoint(f)(...)``,
``implicit_root`` solvers): each binds the call's operands to the Python signature of
the function called, adds statements defining new variables, and replaces the call's
assignment. :class:`CallRewrite` holds that scaffolding once.
"""
import inspect

from numba.core import ir

from ...errors import raise_non_differentiable


class CallRewrite:
    """The rewrite of the call ``target = f(...)`` at ``block.body[i]``; ``who`` names
    the construct in refusals (``"checkpoint(step)"``)."""

    def __init__(self, state, block, i, who):
        self.fir, self.scope, self.block, self.i = state.func_ir, block.scope, block, i
        stmt = block.body[i]
        self.call, self.loc, self.target = stmt.value, stmt.loc, stmt.target
        self.qualname = state.func_id.func_qualname
        self.who = who
        self.new = []

    def refuse(self, what):
        raise_non_differentiable(self.qualname, "%s%s" % (self.who, what), self.loc)

    def assign(self, value, prefix):
        """A new variable holding ``value``, defined before the call's replacement."""
        v = self.scope.redefine(prefix, self.loc)
        self.new.append(ir.Assign(value, v, self.loc))
        self.fir._definitions[v.name].append(value)
        return v

    def operands(self, py_func, default_prefix):
        """The call's operands in the order of ``py_func``'s parameters, defaults filled
        in (a call with ``*args`` or ``**kwargs`` is refused: its operands are not known
        before typing)."""
        e = self.call
        if e.vararg is not None or e.varkwarg is not None:
            self.refuse(" called with *args or **kwargs")
        sig = inspect.signature(py_func)
        try:
            bound = sig.bind(*e.args, **dict(e.kws))
        except TypeError as exc:
            self.refuse(": %s" % exc)
        out = []
        for name, p in sig.parameters.items():
            v = bound.arguments.get(name)
            out.append(v if v is not None else
                       self.assign(ir.Const(p.default, self.loc), default_prefix))
        return out

    def finish(self, result):
        """Assign ``result`` to the call's target and put the new statements in place of
        the call."""
        self.new.append(ir.Assign(result, self.target, self.loc))
        defs = self.fir._definitions[self.target.name]
        if self.call in defs:
            defs.remove(self.call)
        defs.append(result)
        self.block.body[self.i:self.i + 1] = self.new
