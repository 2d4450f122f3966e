"""Checked mode (``boundscheck=True`` or ``debug=True``): the backward checks that it reads
no adjoint array before something was written into it.

The adjoint of an array the function computes starts as *no adjoint yet*, an array of
size 0 (:mod:`numba_adstack.ad.runtime`). Only ``acc``, ``acc_new`` and ``ensure`` take
it in that state, and a name may be copied to another while in it; every other read of it
(a rule's ``{g}``, a view of it, an add into it) is a fault of the rewrite: a size-0 array
broadcasts into a silent zero, and its memory was never written. In checked mode each such
read goes through ``written(a, what)``, which raises
:class:`~numba_adstack.errors.AdjointReadError` naming the value when ``a`` has size 0.
(A value that is itself empty has an empty adjoint too: checked mode assumes the arrays on
the gradient path are not empty.)
"""
import ast
import copy

#: Runtime helpers whose first argument may be an adjoint with no contribution yet (and
#: ``add_adjoint``, whose second may).
TAKES_UNSET = ("acc", "acc_new", "ensure")


def check_adjoint_reads(tree, adjoints):
    """Check, in the generated module ``tree`` (changed in place), every read of an
    adjoint in ``adjoints`` (``{adjoint name: what it is the adjoint of}``), except where
    it may have none yet."""
    _Guard(adjoints).visit(tree)


def _check(name, what):
    return ast.Call(ast.Name("written", ast.Load()),
                    [ast.Name(name, ast.Load()), ast.Constant(what)], [])


class _Guard(ast.NodeTransformer):
    def __init__(self, adjoints):
        self.adjoints = adjoints

    def _what(self, name):
        return ("the backward read the adjoint of %s before anything was written into "
                "it; this is a fault of numba_adstack, please report it with the function"
                % self.adjoints[name])

    def visit_Assign(self, node):
        if isinstance(node.value, ast.Name):
            return node     # a copy of the state, whatever it is (``a_bar = b_bar``)
        return self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        t = node.target
        if isinstance(t, ast.Name) and t.id in self.adjoints:
            # ``a_bar += c`` into a size-0 array adds nothing: check it first.
            return [ast.Expr(_check(t.id, self._what(t.id))), node]
        return node

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id in TAKES_UNSET and node.args \
                and isinstance(node.args[0], ast.Name):
            # (``acc(a, c, like)`` takes a contribution ``c`` with nothing in it yet too:
            # a phi's adjoint flowing on an edge, which nothing may have reached)
            keep = 2 if f.id != "ensure" and len(node.args) > 1 and \
                isinstance(node.args[1], ast.Name) else 1
            node.args[keep:] = [self.visit(a) for a in node.args[keep:]]
            return node
        if isinstance(f, ast.Name) and f.id == "add_adjoint" and len(node.args) == 2 \
                and isinstance(node.args[1], ast.Name):
            node.args[0] = self.visit(node.args[0])     # (what it adds may be unset)
            return node
        return self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in self.adjoints:
            return _check(node.id, self._what(node.id))
        return node


def check_accumulations(tree):
    """Make every ``a += b`` and ``a -= b`` of the generated module ``tree`` (changed in
    place) a call that checks, where ``a`` and ``b`` are arrays, that ``b`` broadcasts to
    ``a``'s shape (Numba's in-place operators do not: a size-0 ``b`` is read past its
    end), and every ``acc``/``acc_new`` the one that checks its contribution."""
    _Accumulations().visit(tree)


_CHECKED_CALLS = {"acc": "acc_checked", "acc_new": "acc_new_checked"}


class _Accumulations(ast.NodeTransformer):
    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return node
        sign = ast.Constant(1.0 if isinstance(node.op, ast.Add) else -1.0)
        t = node.target
        if isinstance(t, ast.Name):
            new = ast.Assign([ast.Name(t.id, ast.Store())], ast.Call(
                ast.Name("checked_add", ast.Load()),
                [ast.Name(t.id, ast.Load()), node.value, sign], []))
        elif isinstance(t, ast.Subscript):
            new = ast.Expr(ast.Call(ast.Name("checked_add_at", ast.Load()),
                                    [_loaded(t.value), _loaded(t.slice), node.value, sign],
                                    []))
        else:
            return node
        return ast.fix_missing_locations(ast.copy_location(new, node))

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id in _CHECKED_CALLS:
            node.func = ast.Name(_CHECKED_CALLS[f.id], ast.Load())
        return node


def _loaded(node):
    """``node`` (an expression of a store target) read."""
    node = copy.deepcopy(node)
    for n in ast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return node
