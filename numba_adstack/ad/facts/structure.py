"""Control-flow structure of a Numba function: loops, regions and their dominators.

The rewrite walks the CFG as a tree of regions: the function body, and inside it one region
per natural loop (its body, back edges removed). Inside a region, each directly nested loop
is collapsed to a single node ``LoopNode``, so every region is a DAG. Forward code is emitted
from a region with post-dominators (where the arms of a branch join again), reverse code with
dominators (where the reversed arms join again).
"""
from numba.core import ir
from numba.core.analysis import compute_cfg_from_blocks


class LoopNode:
    """A natural loop of the CFG, also its collapsed node in the enclosing region."""

    def __init__(self, header, blocks):
        self.header = header
        self.blocks = frozenset(blocks)
        self.parent = None
        self.children = []
        self.depth = 0          # 1 for a loop that no other loop contains
        self.latches = []       # blocks with a back edge to the header
        self.exits = []         # (src, dst) edges leaving the loop, in a fixed order
        self.entries = []       # (src, header) edges entering the loop
        self.range = None       # RangeLoop when this is ``for ... in range(...)``

    def __repr__(self):
        return "Loop@%d" % self.header

    def __lt__(self, other):
        return self.header < other.header


def successors(block):
    term = block.terminator
    if isinstance(term, ir.Jump):
        return [term.target]
    if isinstance(term, ir.Branch):
        if term.truebr == term.falsebr:
            return [term.truebr]
        return [term.truebr, term.falsebr]
    return []


def closure(starts, step):
    """``starts`` and all that ``step(x)`` (the nodes next to ``x``) reaches from them."""
    seen, work = set(), list(starts)
    while work:
        x = work.pop()
        if x in seen:
            continue
        seen.add(x)
        work.extend(step(x))
    return seen


def reachable(blocks, starts):
    """The labels of ``blocks`` (label -> IR block) reachable from ``starts``, those
    included."""
    return closure(starts, lambda b: blocks[b].terminator.get_targets())


class Region:
    """The function body (``loop is None``) or one loop's body, as a DAG of nodes."""

    def __init__(self, structure, loop):
        self.s = structure
        self.loop = loop
        if loop is None:
            self.entry = structure.entry
            blocks = set(structure.blocks)
        else:
            self.entry = loop.header
            blocks = set(loop.blocks)
        self.nodes = []
        seen = set()
        for b in sorted(blocks):
            n = self.node_of(b)
            if n not in seen:
                seen.add(n)
                self.nodes.append(n)
        self.out = {n: self._out_edges(n) for n in self.nodes}
        self.ins = {n: [] for n in self.nodes}
        for n in self.nodes:
            for e in self.out[n]:
                if self.edge_kind(e) == "internal":
                    self.ins[self.node_of(e[1])].append(e)
        self.order = self._topo()
        self.idom = self._dominators(forward=True)
        self.ipdom = self._dominators(forward=False)

    # -- nodes and edges
    def contains(self, block):
        return self.loop is None or block in self.loop.blocks

    def node_of(self, block):
        """The node of this region holding ``block`` (a label or a LoopNode), or None."""
        if not self.contains(block):
            return None
        inner = self.s.innermost.get(block)
        if inner is self.loop:
            return block
        while inner.parent is not self.loop:
            inner = inner.parent
        return inner

    def _out_edges(self, n):
        if isinstance(n, LoopNode):
            return list(n.exits)
        return [(n, t) for t in successors(self.s.blocks[n])]

    def edge_kind(self, e):
        src, dst = e
        if self.loop is not None and dst == self.loop.header:
            return "back"
        if not self.contains(dst):
            return "exit"
        return "internal"

    # -- orders and dominators on the DAG
    def _topo(self):
        order, seen = [], set()

        def visit(n):
            seen.add(n)
            for e in self.out[n]:
                if self.edge_kind(e) == "internal":
                    m = self.node_of(e[1])
                    if m not in seen:
                        visit(m)
            order.append(n)
        visit(self.entry)
        order.reverse()
        return order

    def _dominators(self, forward):
        EXIT = "EXIT"
        if forward:
            preds = {n: [self.node_of(e[0]) for e in self.ins[n]] for n in self.order}
            seq = self.order
            root = self.entry
        else:
            preds = {n: [] for n in self.order}
            preds[EXIT] = []
            for n in self.order:
                for e in self.out[n]:
                    if self.edge_kind(e) == "internal":
                        preds[n].append(self.node_of(e[1]))
                    else:
                        preds[n].append(EXIT)
                if not self.out[n]:
                    preds[n].append(EXIT)
            seq = [EXIT] + list(reversed(self.order))
            root = EXIT
        index = {n: i for i, n in enumerate(seq)}
        idom = {root: root}

        def intersect(a, b):
            while a != b:
                while index[a] > index[b]:
                    a = idom[a]
                while index[b] > index[a]:
                    b = idom[b]
            return a
        for n in seq:
            if n == root:
                continue
            ps = [p for p in preds[n] if p in idom]
            d = ps[0]
            for p in ps[1:]:
                d = intersect(d, p)
            idom[n] = d
        if not forward:
            return {n: (None if d == EXIT else d) for n, d in idom.items() if n != EXIT}
        return idom


class Structure:
    """Loops of a FunctionIR and the regions they define."""

    def __init__(self, func_ir):
        self.func_ir = func_ir
        self.blocks = func_ir.blocks
        self.entry = min(self.blocks)
        cfg = compute_cfg_from_blocks(self.blocks)
        self.preds = {b: [] for b in self.blocks}
        for b, blk in self.blocks.items():
            for t in successors(blk):
                self.preds[t].append(b)
        loops = []
        for header, lp in cfg.loops().items():
            loops.append(LoopNode(header, lp.body))
        loops.sort(key=lambda l: len(l.blocks))
        for i, lp in enumerate(loops):
            for outer in loops[i + 1:]:
                if lp.header in outer.blocks and outer is not lp:
                    lp.parent = outer
                    outer.children.append(lp)
                    break
        self.loops = loops
        self.innermost = {}
        for b in self.blocks:
            best = None
            for lp in loops:
                if b in lp.blocks and (best is None or len(lp.blocks) < len(best.blocks)):
                    best = lp
            self.innermost[b] = best
        for lp in loops:
            d, p = 0, lp
            while p is not None:
                d, p = d + 1, p.parent
            lp.depth = d
            for b in sorted(lp.blocks):
                for t in successors(self.blocks[b]):
                    if t == lp.header:
                        lp.latches.append(b)
                    elif t not in lp.blocks:
                        lp.exits.append((b, t))
            lp.entries = [(p, lp.header) for p in self.preds[lp.header]
                          if p not in lp.blocks]
        self.regions = {None: Region(self, None)}
        for lp in loops:
            self.regions[lp] = Region(self, lp)

    def depth(self, block):
        lp = self.innermost[block]
        return 0 if lp is None else lp.depth

    def enclosing(self, block):
        """Loops containing ``block``, innermost first."""
        out, lp = [], self.innermost[block]
        while lp is not None:
            out.append(lp)
            lp = lp.parent
        return out

    def edge_loops(self, src, dst):
        """Loops in which an edge executes once per iteration: those holding both ends."""
        return [lp for lp in self.enclosing(src) if dst in lp.blocks]


def dominates(region, a, b):
    """Does node ``a`` dominate node ``b`` in ``region``?"""
    x = b
    while True:
        if x == a:
            return True
        if x == region.entry:
            return False
        x = region.idom[x]


def common_dominator(region, a, b):
    """The nearest node of ``region`` that dominates both ``a`` and ``b``."""
    da, x = [], a
    while True:
        da.append(x)
        if x == region.entry:
            break
        x = region.idom[x]
    x = b
    while x not in da:
        x = region.idom[x]
    return x


def node_key(n):
    """A short stable key of a region node (a block label or a loop), for record names."""
    return "L%d" % n.header if isinstance(n, LoopNode) else str(n)
