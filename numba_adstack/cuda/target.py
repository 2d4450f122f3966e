"""The CUDA target of the rewrite: what kernels need that CPU functions do not.

A kernel returns nothing: its outputs are the arrays it writes, and the backward kernel
takes their adjoints as seeds. Its forward launch has already written those arrays, so the
replay does not write them again. Adjoints of elements other threads may read too are
accumulated with ``cuda.atomic.add``; an element indexed by the thread's own grid position
needs no atomic. Stacks are per-thread local memory (always "frame" storage), and an
overflow raises a flag that the launcher turns into an exception.
"""
import operator

from numba.core import ir

from ..ad.generated_source.code import stmt
from ..ad.emit.target import Target
from .standins import STANDIN, cuda_module, local_array_standin, shared_array_standin

_DIMS = ("threadIdx", "blockIdx", "blockDim")


class CudaTarget(Target):
    returns_value = False
    fuses_loops = False
    parallel_loops = False
    allocates_arrays = False
    forced_storage = "frame"
    checkpoints = False
    history_place = "in each thread's local memory"
    # (a kernel's backward is not differentiated again: its zero-safe products are
    # branches, which CUDA and the simulator compile as they are)
    guarded_product_calls = False

    def __init__(self, sized_at_launch=False):
        super().__init__(global_map={id(STANDIN): cuda_module()})
        # Stacks sized at each launch (see numba_adstack.cuda.launch): two more parameters.
        self.sized_at_launch = sized_at_launch
        self.atomic_add = STANDIN.atomic.add
        self.grid = STANDIN.grid
        self.dims = {id(getattr(STANDIN, d)): d for d in _DIMS}

    # -- reading the IR
    def atomic_update(self, facts, stmt):
        if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
                and stmt.value.op == "call"
                and facts.resolve_global(stmt.value.func) is self.atomic_add):
            a = stmt.value.args
            return a[0], a[1], a[2]
        return None

    def is_thread_local_constructor(self, fn):
        return fn is local_array_standin

    def display_name(self, fn):
        if fn is local_array_standin:
            return "cuda.local.array"
        if fn is shared_array_standin:
            return "cuda.shared.array"
        return None

    def refused_constructor(self, fn):
        if fn is shared_array_standin:
            return ("its adjoint would be shared by the threads of a block; keep per-thread "
                    "values in cuda.local.array or in variables")
        return None

    # -- emitting
    def module_name(self, value):
        return "cuda" if getattr(value, "__name__", None) == "numba.cuda" else None

    def needs_atomic(self, facts, expr):
        return not self._thread_private(facts, expr) and \
            not facts.local_array(facts.array_root(expr.value.name))

    def accumulates_privately(self, facts, e):
        # Every thread adds to the same element (``w[0]`` read in a loop): one atomic per
        # contribution serialises the threads on it. When the index is a constant and the
        # kernel never writes the array, nothing reads that adjoint before the end, so the
        # thread sums locally and adds once.
        idx = e.index_var if e.op == "static_getitem" else e.index
        constant = e.op == "static_getitem" if idx is None else self._constant(facts, idx)
        return constant and facts.is_arg_array(e.value.name) and \
            facts.is_readonly_array(e.value.name)

    def _constant(self, facts, var):
        """Is the index ``var`` (a tuple's items too) known before the kernel runs?"""
        form = facts.static_form(var.name)
        if form is not None:
            return form[0] == "const"
        ex = facts.def_expr(var.name)
        return isinstance(ex, ir.Expr) and ex.op == "build_tuple" and \
            all(self._constant(facts, v) for v in ex.items)

    def atomic_add_statement(self, array, index, value):
        return stmt("cuda.atomic.add({}, {}, {})", array, index, value)

    def replays_store(self, facts, stmt):
        return not facts.is_arg_array(stmt.target.name)

    def seeds_store(self, facts, stmt):
        return facts.is_arg_array(stmt.target.name)

    def backward_params(self, facts, names):
        from numba.core import types
        extra = ["_gstack", "_gmeta"] if self.sized_at_launch else []
        return [names.bar(a) for a in facts.arg_vars
                if isinstance(facts.ty(a), types.Array)] + ["_flag"] + extra

    def backward_prologue(self, facts, names, assigned=()):
        return []

    def backward_epilogue(self, facts, activity, names, stacks, wrt):
        out = [stmt("if overflowed({}):\n    _flag[0] = 1", st) for st in stacks]
        out.append(stmt("return"))
        return out

    def return_statement(self, value):
        return None

    # -- thread-private indices
    def _thread_private(self, facts, e):
        """Is the element ``e`` reads indexed by this thread's own grid position? Then no
        other thread accumulates into its adjoint and no atomic is needed."""
        idx = e.index_var if e.op == "static_getitem" else e.index
        if idx is None:
            return False
        return self._grid_derived(facts, idx.name)

    def _dim_x(self, facts, name):
        """'threadIdx', 'blockIdx' or 'blockDim' when ``name`` is that object's ``.x``."""
        ex = facts.def_expr(name)
        while isinstance(ex, ir.Var):
            ex = facts.def_expr(ex.name)
        if isinstance(ex, ir.Expr) and ex.op == "getattr" and ex.attr == "x":
            return self.dims.get(id(facts.resolve_global(ex.value)))
        return None

    def _grid_derived(self, facts, name, depth=0):
        if depth > 20:
            return False
        ex = facts.def_expr(name)
        if isinstance(ex, ir.Var):
            return self._grid_derived(facts, ex.name, depth + 1)
        if not isinstance(ex, ir.Expr):
            return False
        if ex.op == "call":
            fn = facts.resolve_global(ex.func)
            return getattr(fn, "__name__", "") == "grid" and fn is self.grid
        if ex.op == "build_tuple":
            return all(self._grid_derived(facts, v.name, depth + 1) for v in ex.items)
        if ex.op == "binop" and ex.fn is operator.add:
            return self._by_hand_grid(facts, ex)
        if ex.op in ("static_getitem", "exhaust_iter"):
            return self._grid_derived(facts, ex.value.name, depth + 1)
        return False

    def _by_hand_grid(self, facts, ex):
        """``threadIdx.x + blockIdx.x * blockDim.x``, in any order: cuda.grid(1) by hand."""
        terms = [self._dim_x(facts, ex.lhs.name), self._dim_x(facts, ex.rhs.name)]
        for a, b in ((0, 1), (1, 0)):
            if terms[a] == "threadIdx":
                prod = facts.def_expr((ex.rhs if b else ex.lhs).name)
                if isinstance(prod, ir.Expr) and prod.op == "binop" and \
                        prod.fn is operator.mul and {
                            self._dim_x(facts, prod.lhs.name),
                            self._dim_x(facts, prod.rhs.name)} == {"blockIdx", "blockDim"}:
                    return True
        return False
