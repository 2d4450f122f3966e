"""The one dataflow solver of the passes over the generated source, and its liveness.

Every analysis that tidies the backward's text (the constants a state variable may hold,
the names no path reads, the names known to hold ``-0.0``, the names assigned on every
path) is a client of :class:`Dataflow`: it gives a lattice (the value at a point no path
reaches, a join of the values of two paths that meet) and the effect of each statement,
and the solver follows the control flow of a function body forward or backward. The code
is structured (``if``/``else``, ``while``/``for`` with ``break``, ``continue`` and an
``else``, ``return``, ``raise``), so its syntax tree is its control-flow graph and the
solver walks it: each loop is iterated at its head until the value there stops changing,
then what follows the loop is visited; an inner loop is solved again on each pass of the
loop around it, from its new entry value.

A client may record what it learns at a statement each time the solver visits it: the
values at a point only move one way between visits (up for a join of unions, down for a
join of intersections), towards the fixed point, so the records combined the same way
(an "on some visit", an "on every visit") are what holds at it.
Expressions are taken not to assign (the emitter writes no ``:=``); a statement the solver
does not know (``with``, ``try``, a nested ``def``) or a jump outside a loop raises
:class:`Unsure`, and the client leaves the function as it is.
"""
import ast

from .syntax import walk

_SIMPLE = (ast.Assign, ast.AugAssign, ast.Expr)


class Unsure(Exception):
    """A construct the solver does not follow."""


class Dataflow:
    """A dataflow problem over a function body; subclasses give the lattice and effects.

    Forward, a value says what holds before a statement and :meth:`transfer` gives what
    holds after it; backward, the other way round. :meth:`solve` returns the value at the
    end of the body (forward) or at its start (backward)."""

    forward = True
    #: The value at a point no path reaches: the identity of :meth:`join`.
    unreachable = None

    def join(self, a, b):
        """The value where paths with values ``a`` and ``b`` meet."""
        raise NotImplementedError

    def transfer(self, stmt, value):
        """Across a simple statement (an assignment, an augmented one, an expression)."""
        raise NotImplementedError

    def evaluate(self, node, value):
        """Across the evaluation of ``node``, which reads and assigns nothing else: a test,
        a loop's iterable, a ``return`` or ``raise``."""
        return value

    def bind(self, target, value):
        """Across the assignment of a ``for`` loop's target at each iteration."""
        return value

    def branch(self, stmt, value):
        """``(value into the body, value into the else)`` of the ``if`` ``stmt`` (forward),
        once its test is evaluated: a client may refine it by the test."""
        return value, value

    # ------------------------------------------------------------------------ solver
    def solve(self, stmts, boundary):
        """Solve over the statement list ``stmts``: ``boundary`` is the value at the
        function's entry (forward) or exit (backward)."""
        self._loops = []    # per enclosing loop: forward [breaks, continues], backward
        self._exit = boundary   # (after it, at its head)
        if self.forward:
            return self._forward(stmts, boundary)
        return self._backward(stmts, boundary)

    def _forward(self, stmts, value):
        transfer, compound = self.transfer, self._forward_stmt
        for s in stmts:
            value = transfer(s, value) if s.__class__ in _SIMPLE else compound(s, value)
        return value

    def _forward_stmt(self, s, value):
        cls = s.__class__
        if cls is ast.If:
            into, other = self.branch(s, self.evaluate(s.test, value))
            return self.join(self._forward(s.body, into), self._forward(s.orelse, other))
        if cls is ast.While or cls is ast.For:
            return self._forward_loop(s, value)
        if cls is ast.Pass:
            return value
        if cls is ast.Return or cls is ast.Raise:
            self.evaluate(s, value)
            return self.unreachable
        if (cls is ast.Break or cls is ast.Continue) and self._loops:
            self._loops[-1][cls is ast.Continue].append(value)
            return self.unreachable
        raise Unsure()

    def _forward_loop(self, s, entry):
        loop = s.__class__ is ast.For
        if loop:
            entry = self.evaluate(s.iter, entry)
        head = entry
        while True:
            tested = head if loop else self.evaluate(s.test, head)
            self._loops.append(([], []))
            end = self._forward(s.body, self.bind(s.target, tested) if loop else tested)
            breaks, continues = self._loops.pop()
            new = self.join(entry, end)
            for v in continues:
                new = self.join(new, v)
            if new == head:
                break
            head = new
        after = self.unreachable if _forever(s) else tested
        if s.orelse:
            after = self._forward(s.orelse, after)
        for v in breaks:
            after = self.join(after, v)
        return after

    def _backward(self, stmts, value):
        transfer, compound = self.transfer, self._backward_stmt
        for s in reversed(stmts):
            value = transfer(s, value) if s.__class__ in _SIMPLE else compound(s, value)
        return value

    def _backward_stmt(self, s, value):
        cls = s.__class__
        if cls is ast.If:
            return self.evaluate(s.test, self.join(self._backward(s.body, value),
                                                   self._backward(s.orelse, value)))
        if cls is ast.While or cls is ast.For:
            return self._backward_loop(s, value)
        if cls is ast.Pass:
            return value
        if cls is ast.Return or cls is ast.Raise:
            return self.evaluate(s, self._exit)
        if (cls is ast.Break or cls is ast.Continue) and self._loops:
            return self._loops[-1][cls is ast.Continue]
        raise Unsure()

    def _backward_loop(self, s, after):
        loop = s.__class__ is ast.For
        done = self._backward(s.orelse, after) if s.orelse else after
        if _forever(s):
            done = self.unreachable
        head = self.unreachable
        while True:
            self._loops.append((after, head))
            body = self._backward(s.body, head)
            self._loops.pop()
            if loop:
                new = self.join(self.bind(s.target, body), done)
            else:
                new = self.evaluate(s.test, self.join(body, done))
            if new == head:
                break
            head = new
        return self.evaluate(s.iter, head) if loop else head


class EveryPath(Dataflow):
    """A forward analysis of the names something holds of on every path: a set of names,
    None at a point no path reaches (as good as every name, to the paths that meet it)."""

    unreachable = None

    def join(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return a & b


def _forever(loop):
    """``while True:``: it is left by a jump only."""
    return loop.__class__ is ast.While and loop.test.__class__ is ast.Constant \
        and loop.test.value is True


def stored(targets):
    """The names the assignment targets ``targets`` bind."""
    return {n.id for t in targets for n in walk(t)
            if n.__class__ is ast.Name and n.ctx.__class__ is ast.Store}


def loads(node):
    """The names ``node`` reads."""
    return {n.id for n in walk(node)
            if n.__class__ is ast.Name and n.ctx.__class__ is ast.Load}


# ---------------------------------------------------------------------------- liveness
class Liveness(Dataflow):
    """The names some path reads before it assigns them (of ``names`` only, when given).
    Records, per ``name = ...`` of such a name, whether it is live after it."""

    forward = False
    unreachable = frozenset()

    def __init__(self, names=None):
        self.names = names
        self.live_after = {}    # id(single-name store) -> read after it on some path
        self._effect = {}       # id(statement) -> [the store it records, kills, reads]

    def join(self, a, b):
        return a | b

    def transfer(self, s, live):
        effect = self._effect.get(id(s))
        if effect is None:
            effect = self._effect[id(s)] = self._stores(s)
        store, kills, reads = effect
        if store is not None:
            self.live_after[id(s)] = self.live_after.get(id(s), False) or store in live
        if kills:
            live = live - kills
        if self.names is not None and self.names <= live:
            return live     # (every name watched is live: what it reads adds nothing)
        if reads is None:
            reads = effect[2] = self._statement_reads(s)
        return live | reads

    def evaluate(self, node, live):
        if self.names is not None and self.names <= live:
            return live
        reads = self._effect.get(id(node))
        if reads is None:
            reads = self._effect[id(node)] = self._reads(node)
        return live | reads

    def bind(self, target, live):
        return live - stored([target])

    def _reads(self, node):
        names = self.names
        if names is None:
            return loads(node)
        return {n.id for n in walk(node) if n.__class__ is ast.Name and n.id in names
                and n.ctx.__class__ is ast.Load}

    def _stores(self, s):
        if s.__class__ is not ast.Assign:
            return [None, (), None]
        store = None
        if len(s.targets) == 1 and s.targets[0].__class__ is ast.Name:
            name = s.targets[0].id
            if self.names is None or name in self.names:
                store = name
        return [store, stored(s.targets), None]

    def _statement_reads(self, s):
        cls = s.__class__
        if cls is ast.Assign:
            reads = self._reads(s.value)
            for t in s.targets:
                reads |= self._reads(t)
            return reads
        if cls is ast.AugAssign:
            reads = self._reads(s.value) | self._reads(s.target)
            if s.target.__class__ is ast.Name and (self.names is None
                                                  or s.target.id in self.names):
                reads |= {s.target.id}
            return reads
        return self._reads(s.value)


def dead_stores(fn, names=None):
    """The ``name = ...`` statements of the function ``fn`` (of a name in ``names``, when
    given) that no path reads afterwards: the ids of their nodes; None when the function
    has a construct the solver does not follow."""
    flow = Liveness(None if names is None else frozenset(names))
    try:
        flow.solve(fn.body, frozenset())
    except Unsure:
        return None
    return {k for k, live in flow.live_after.items() if not live}
