"""Snapshots: copies of arrays whose memory is written after the sweep's rules read it.

A rule reads its operands as they were when it ran (``z = x * w`` reads ``w``). An array
variable names memory; when that memory is written later (``w -= lr * g`` in the same
iteration, an element store), the variable no longer holds what the rule read. The replay
then copies the array right before the statement (right after, for the statement's own
result), and the sweep reads the copy.
"""
from ..facts.memory import unchanged_after_definition
from ..typeinfo import is_float_array


def choose_snapshots(facts, ref_uses, added_types):
    """``{statement target: {array read: its copy's name}}``; the copies' types go into
    ``added_types``."""
    out = {}
    for x, uses in sorted(ref_uses.items()):
        if not (x in facts.typemap and is_float_array(facts.ty(x))) \
                or facts.is_readonly_array(x):
            continue
        for ctx in sorted((u for u in uses if u is not None), key=str):
            name = ctx[0]
            if unchanged_after_definition(facts, x, name):
                continue     # filled before, read after: the sweep reads the array
            copy = "%s.copy.%s" % (x, name)
            out.setdefault(name, {})[x] = copy
            t = facts.ty(x)
            added_types[copy] = t.copy(layout="C") if t.layout != "C" else t
    return out

