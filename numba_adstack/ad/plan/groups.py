"""Stack groups: one stack per kind of entry, shared by every value and record of that kind.

The sweep pops exactly in the reverse order of the replay's pushes (it walks the path the
replay took backwards), so values of one dtype and storage can share one stack, as
Tapenade's single stack does: fewer stacks to declare, one count to keep in a register,
and pushes that run through memory in order. A loop whose reverse may be skipped (its
history dropped whole) or that runs in a parallel helper (its history per thread) keeps
groups of its own.
"""
from ..facts.structure import node_key
from .stacks import StackSpec

from ..typeinfo import STACK_TAGS as _SHORT


def group_stacks(facts, value_stacks, record_stacks, scoped_loops, types_of, site_of):
    """``({stack name: StackSpec}, {value or record name: stack name}, {list stack name:
    the Numba type of its arrays})``."""
    scoped = frozenset(scoped_loops)
    members, list_types = {}, {}
    for name, spec in value_stacks.items():
        members[name] = (spec, _scope(facts, facts.def_label(site_of(name)), scoped))
        if spec.storage == "list":
            t = types_of(name)
            list_types[name] = t.copy(layout="C") if t.layout != "C" else t
    record_scope = _record_scopes(facts, scoped)
    for name, spec in record_stacks.items():
        members[name] = (spec, record_scope[name])
    stack_of = {}
    kinds = sorted({str(t) for t in list_types.values()})
    stacks, stack_types = {}, {}
    for name in sorted(members):
        spec, scope = members[name]
        if spec.storage == "list":
            kind = "l%d" % kinds.index(str(list_types[name]))
        elif spec.storage == "launch":
            kind = "k%d" % spec.index       # sized per launch, each its own
        else:
            kind = _SHORT.get(spec.dtype, spec.dtype.split(".")[-1])
        st = "_st%s%s%s" % (kind, "h" if spec.storage == "heap" else "",
                            "" if scope is None else "_L%d" % scope.header)
        stacks[st] = spec if st not in stacks else _merged(stacks[st], spec)
        stack_of[name] = st
        if spec.storage == "list":
            stack_types[st] = list_types[name]
    return stacks, stack_of, stack_types


def _merged(a, b):
    """One stack for the members of ``a`` and ``b``: their capacities and the room they
    reserve at loop entries add up."""
    reserves = dict(a.reserves)
    for header, per in b.reserves:
        reserves[header] = reserves.get(header, 0) + per
    what = a.what if not b.what else ("%s; %s" % (a.what, b.what) if a.what else b.what)
    return StackSpec(a.dtype, a.capacity + b.capacity, a.storage,
                     tuple(sorted(reserves.items())), what, a.block)


def _scope(facts, label, scoped):
    """The innermost loop of ``scoped`` that holds ``label``, or None."""
    for lp in facts.s.enclosing(label):
        if lp in scoped:
            return lp
    return None


def _record_scopes(facts, scoped):
    """Where each control-flow record is pushed: ``_n``/``_x`` after their loop, ``_l`` on
    its back edges, ``_c`` on the edges of the region its merge belongs to."""
    out = {}
    for lp in facts.s.loops:
        after = _scope(facts, lp.header, scoped - {lp})
        out["_n%d" % lp.header] = out["_x%d" % lp.header] = after
        out["_l%d" % lp.header] = _scope(facts, lp.header, scoped)
    for region in facts.s.regions.values():
        scope = None if region.loop is None else _scope(facts, region.entry, scoped)
        for n in region.nodes:
            out["_c%s" % node_key(n)] = scope
    return out
