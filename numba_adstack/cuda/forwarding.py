"""Reads of an element the thread has just stored: the stored value.

A kernel's backward runs after its forward launch, and does not store into the argument
arrays again (:mod:`.target`): the arrays hold what the kernel wrote last. A read of an
element the same thread stored earlier in the same block (``y[i] = 2.0 * x[i]`` then
``y[i] * x[i]``) is, in the typed IR the backward is made from, the value stored, so the
replay computes it instead of reading the array. Any store, atomic or call between them
ends what is known (another variable may name the array); anything else still reading a
written array is refused (:mod:`numba_adstack.ad.facts.unreplayed_reads`).
"""
from numba.core import ir


def _key(node):
    """The array variable and the index of a store or read, as written."""
    if isinstance(node, ir.StaticSetItem) or (isinstance(node, ir.Expr) and
                                              node.op == "static_getitem"):
        return (node.target.name if isinstance(node, ir.StaticSetItem) else node.value.name,
                "const", repr(node.index))
    return (node.target.name if isinstance(node, ir.SetItem) else node.value.name,
            "var", node.index.name)


def forward_stored_elements(typed):
    """Replace, in ``typed`` (a captured TypedIR), each read of an element stored just
    before in the same block by the value stored."""
    fir, typemap = typed.func_ir, typed.typemap
    for blk in fir.blocks.values():
        known = {}
        for stmt in blk.body:
            if isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                known.clear()
                array = typemap.get(stmt.target.name)
                if getattr(array, "dtype", None) == typemap.get(stmt.value.name):
                    known[_key(stmt)] = stmt.value
                continue
            if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)):
                continue
            e = stmt.value
            if e.op in ("getitem", "static_getitem"):
                stored = known.get(_key(e))
                if stored is not None and typemap.get(stmt.target.name) == \
                        typemap.get(stored.name):
                    defs = fir._definitions[stmt.target.name]
                    if e in defs:
                        defs.remove(e)
                    defs.append(stored)
                    stmt.value = stored
            elif e.op == "call":
                known.clear()
    return typed
