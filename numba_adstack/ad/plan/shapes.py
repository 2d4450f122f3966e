"""Shapes: which regions are emitted structured and which as a guarded sequence.

Structured emission writes a branch as ``if``/``else`` up to where its arms join (the
post-dominator forwards, the dominator backwards). On control flow that is not nested
(``break``, ``continue``, ``and``/``or`` conditions, several exits), arms share nodes and
structured emission would write those nodes once per path: exponential in the worst case.
Such a region is written instead as a *guarded sequence*: every node once, in topological
order (reverse order for the sweep), each under ``if _state == node:``, with each node
setting ``_state`` to the node that comes next on the path actually taken. The size is
then linear in the region, and a path costs one comparison per node.

Backwards, a merge point is reversed through its *join tree* (:func:`join_tree`): edges
that come through different arms of a nested branch are grouped by those arms, so that an
``if`` inside an ``if`` whose arms all join at the same point is reversed as it nests, each
branch node once, rather than once per edge.

A loop's reverse replays its partial last iteration (the one that ended at an exit) and
then its full iterations. When the partial iteration is a straight chain from the header
(a ``for`` loop's exit test) it is written apart, as a counted loop reads best; otherwise
both share one copy of the body's reverse, entered at a node chosen per iteration.
"""
from ..facts.structure import closure



class Shapes:
    def __init__(self, facts):
        self.facts = facts
        self._fwd = {}
        self._rev = {}
        self._joins = {}

    def forward_structured(self, region):
        """Does structured forward emission of ``region`` write each node once?"""
        if region not in self._fwd:
            count = {}
            self._fwd[region] = _fwd_walk(region, region.entry, None, count,
                                          2 * len(region.nodes))
        return self._fwd[region]

    def reverse_structured(self, region, start):
        """Does structured reverse emission of ``region`` from ``start`` write each node
        once?"""
        key = (region, start)
        if key not in self._rev:
            count = {}
            self._rev[key] = _rev_walk(region, start, None, count, 2 * len(region.nodes))
        return self._rev[key]

    def join(self, region, n):
        """How the sweep reverses the edges into merge node ``n`` (see :func:`join_tree`),
        memoized."""
        key = (region, n)
        if key not in self._joins:
            self._joins[key] = join_tree(region, region.ins[n])
        return self._joins[key]

    def in_order(self, region, n):
        """The edges into ``n`` in the order their record numbers them: the order of the
        leaves of its join tree, so that each branch of it is a range of numbers."""
        return list(join_leaves(self.join(region, n)))

    def straight_exits(self, lp):
        """Is ``lp`` a ``for`` loop left only by its exit test, so that its partial last
        iteration is the straight chain of blocks from the header to that test?"""
        rl = lp.range
        if rl is None:
            return False
        chain, n = {lp.header}, lp.header
        blocks = self.facts.fir.blocks
        while n != rl.block:
            term = blocks[n].terminator
            n = term.target
            chain.add(n)
        return all(src in chain for src, _ in lp.exits)


def _next(region, e):
    return region.node_of(e[1]) if region.edge_kind(e) == "internal" else None


def _visit(count, n, budget):
    count[n] = count.get(n, 0) + 1
    count[None] = count.get(None, 0) + 1
    return count[n] == 1 and count[None] <= budget


def _fwd_walk(region, n, stop, count, budget):
    """Walk ``n`` up to ``stop`` as ``Forward.seq`` emits it; False as soon as a node is
    written twice."""
    while n is not None and n != stop:
        if not _visit(count, n, budget):
            return False
        edges = region.out[n]
        if not edges:
            return True
        if len(edges) == 1:
            n = _next(region, edges[0])
            continue
        j = region.ipdom.get(n)
        for e in edges:
            m = _next(region, e)
            if m is not None and m != j and not _fwd_walk(region, m, j, count, budget):
                return False
        n = j
    return True


def _rev_walk(region, n, stop, count, budget):
    """Walk ``n`` back to ``stop`` as ``Reverse.seq`` emits it; False as soon as a node
    is written twice."""
    while n != stop:
        if not _visit(count, n, budget):
            return False
        if n == region.entry:
            return True
        ins = region.ins[n]
        if len(ins) == 1:
            n = region.node_of(ins[0][0])
            continue
        d = region.idom[n]
        if not _join_walk(region, join_tree(region, ins), d, count, budget):
            return False
        n = d
    return True


def _join_walk(region, tree, stop, count, budget):
    """Walk a join tree as ``Reverse.join`` emits it back to ``stop``."""
    if tree[0] == "edge":
        p = region.node_of(tree[1][0])
        return p == stop or _rev_walk(region, p, stop, count, budget)
    if tree[0] == "flat":
        return all(_join_walk(region, ("edge", e), stop, count, budget) for e in tree[1])
    _, b, groups = tree
    return all(_join_walk(region, g, b, count, budget) for g in groups) and (
        b == stop or _rev_walk(region, b, stop, count, budget))


def join_tree(region, edges):
    """The edges ``edges`` into one merge node, as the branches of the replay nest them:
    ``("edge", e)`` for one edge; ``("branch", b, subtrees)`` when they come through
    different successors of ``b``, their nearest common dominator (one subtree per
    successor, in the order of ``b``'s edges); ``("flat", edges)`` when they do not split
    that way. The sweep reverses a branch once, after its arms: a nested ``if`` whose arms
    all join at the same merge point is not written once per arm."""
    if len(edges) == 1:
        return ("edge", edges[0])
    srcs = [region.node_of(e[0]) for e in edges]
    b = _common_dominator(region, srcs)
    outs = region.out[b]
    groups = {}
    for e, p in zip(edges, srcs):
        if p == b:
            k = outs.index(e) if e in outs else None
        else:
            while region.idom[p] != b:
                p = region.idom[p]
            ks = [k for k, o in enumerate(outs) if region.edge_kind(o) == "internal"
                  and region.node_of(o[1]) == p]
            k = ks[0] if len(ks) == 1 and len(region.ins[p]) == 1 else None
        if k is None:
            return ("flat", list(edges))
        groups.setdefault(k, []).append(e)
    if len(groups) < 2:
        return ("flat", list(edges))
    return ("branch", b, [join_tree(region, groups[k]) for k in sorted(groups)])


def join_leaves(tree):
    """The edges of a join tree, in the order its branches nest."""
    if tree[0] == "edge":
        yield tree[1]
    elif tree[0] == "flat":
        yield from tree[1]
    else:
        for g in tree[2]:
            yield from join_leaves(g)


def _common_dominator(region, nodes):
    index = {n: i for i, n in enumerate(region.order)}
    d = nodes[0]
    for n in nodes[1:]:
        while d != n:
            while index[d] > index[n]:
                d = region.idom[d]
            while index[n] > index[d]:
                n = region.idom[n]
    return d


def ancestors(region, starts):
    """The nodes of ``region`` from which one of ``starts`` is reached (starts included)."""
    return closure(starts, lambda n: () if n == region.entry else
                   [region.node_of(e[0]) for e in region.ins[n]])
