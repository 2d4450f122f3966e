"""Statements added to the untyped IR by the capture's rewriting passes (loop forms,
writes made explicit): one fresh variable per statement, in the scope of one function."""
import operator

from numba.core import ir
from numba.core.compiler import _EarlyPipelineCompletion
from numba.core.compiler_machinery import FunctionPass
from numba.core import ir_utils
from numba.core.ir_utils import GuardException, build_definitions, find_callname

from ...errors import NonDifferentiableError, raise_non_differentiable


class Tuple:
    """An item that is a tuple: the variable holding it and the items inside."""

    def __init__(self, var, items):
        self.var = var
        self.items = items


def var_of(item):
    return item.var if isinstance(item, Tuple) else item


class Emitter:
    """Appends statements to ``out`` in the scope of one function, one fresh variable
    each; ``refuse`` raises NonDifferentiableError at the statement's line."""

    def __init__(self, state, scope, loc, indices=()):
        self.state = state
        self.indices = indices  # names of the loop indices made so far (integers)
        self.fir = state.func_ir
        self.scope = scope
        self.loc = loc
        self.out = []
        self.made = []          # every statement made, to drop those left unused

    def refuse(self, what):
        raise_non_differentiable(self.state.func_id.func_qualname, what, self.loc)

    def emit(self, stmt):
        self.out.append(stmt)
        self.made.append(stmt)
        return stmt

    def assign(self, value, name="$loopform"):
        var = self.scope.redefine(name, self.loc)
        self.emit(ir.Assign(value, var, self.loc))
        return var

    def const(self, value):
        return self.assign(ir.Const(value, self.loc))

    def global_(self, fn):
        return self.assign(ir.Global(getattr(fn, "__name__", str(fn)), fn, self.loc))

    def call(self, fn, *args, kws=()):
        return self.assign(ir.Expr.call(self.global_(fn), list(args), list(kws), self.loc))

    def binop(self, fn, lhs, rhs):
        return self.assign(ir.Expr.binop(fn, lhs, rhs, self.loc))

    def getitem(self, value, index):
        return self.assign(ir.Expr.getitem(value, index, self.loc))

    def static_getitem(self, value, index):
        return self.assign(ir.Expr.static_getitem(value, index, None, self.loc))

    def tuple(self, items):
        var = self.assign(ir.Expr.build_tuple([var_of(i) for i in items], self.loc))
        return Tuple(var, items)

    def definition(self, var):
        try:
            return self.fir.get_definition(var)
        except KeyError:
            return None

    def callname(self, expr):
        try:
            return find_callname(self.fir, expr)
        except (GuardException, KeyError):
            return None


def fresh_label(fir):
    """A block label no block of ``fir`` has: Numba's label counter is shared by every
    function compiled, and may be behind this function's own labels."""
    ir_utils._the_max_label.update(max(fir.blocks))
    return ir_utils.next_label()


def product(em, dims):
    out = dims[0]
    for d in dims[1:]:
        out = em.binop(operator.mul, out, d)
    return out


def unravel(em, k, dims):
    """The C-order index (i0, ..., i[n-1]) of flat index ``k`` in an array of ``dims``."""
    idx, rest = [], k
    for d in reversed(dims[1:]):
        idx.append(em.binop(operator.mod, rest, d))
        rest = em.binop(operator.floordiv, rest, d)
    idx.append(rest)
    return idx[::-1]


def rewrite_statements(state, rewrite, **emitter_fields):
    """Replace each statement of the function by ``rewrite(emitter, statement)``: a list
    of statements, or None to keep it (the emitter, one per statement, gets
    ``emitter_fields`` as attributes). True when any was replaced; the definitions are
    then read again."""
    fir = state.func_ir
    fir._definitions = build_definitions(fir.blocks)
    changed = False
    for blk in fir.blocks.values():
        body = []
        for stmt in blk.body:
            em = Emitter(state, blk.scope, stmt.loc)
            vars(em).update(emitter_fields)
            new = rewrite(em, stmt)
            body.extend([stmt] if new is None else new)
            changed |= new is not None
        blk.body = body
    if changed:
        fir._definitions = build_definitions(fir.blocks)
    return changed


def global_value(em, var):
    """The object a variable holds when it is a global or a module's attribute
    (``np.sin``, ``operator.imul``), else None."""
    return ir_global(em.fir, var)


def ir_global(fir, var):
    """What ``var`` of ``fir`` holds when it is a global or an attribute of one (``np.sin``,
    ``numba_adstack.checkpoint``), else None."""
    try:
        d = fir.get_definition(var)
    except KeyError:
        return None
    if isinstance(d, (ir.Global, ir.FreeVar)):
        return d.value
    if isinstance(d, ir.Expr) and d.op == "getattr":
        base = ir_global(fir, d.value)
        return getattr(base, d.attr, None) if base is not None else None
    return None


class RefusingPass(FunctionPass):
    """A capture pass whose refusal ends Numba's pipeline with the refusal itself (handed
    back as it is, not wrapped in Numba's pipeline message). Subclasses write ``_run``."""

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        try:
            return self._run(state)
        except NonDifferentiableError as exc:
            raise _EarlyPipelineCompletion(exc)


def read_names(fir):
    """The names of the variables some statement of ``fir`` reads (a variable only
    assigned is not among them)."""
    used = set()
    for blk in fir.blocks.values():
        for stmt in blk.body:
            for v in stmt.list_vars():
                if not (isinstance(stmt, ir.Assign) and v.name == stmt.target.name):
                    used.add(v.name)
    return used
