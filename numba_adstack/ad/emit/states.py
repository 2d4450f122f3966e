"""State numbers of guarded sequences, resolved on the backward's tree.

A guarded sequence (see :mod:`..plan.shapes`) keeps the node that runs next in a state
variable. Nodes that turn out to do nothing but pass control on (an empty block in the
sweep) are left out: whoever would set the state to such a node sets it to the node it
passes to. Which nodes those are is known only once they are written, so a state is
written as a marker, a name of its own that stands for its node (``_rv = _state3``, ``if
_rv == _state3:``), and :meth:`States.resolve` replaces each marker of the parsed tree by
its node's number.
"""
import ast

from .syntax import walk


class States:
    def __init__(self, names):
        self.names = names      # the generated module's names (markers are among them)
        self.alias = {}         # marker -> the marker of the node it passes control to
        self.number = {}        # marker -> the node's number in its region
        self._marker = {}

    def marker(self, region, index, sweep=True):
        """The marker of node ``index`` of ``region`` in the sweep (or in the replay:
        their nodes are left out independently)."""
        key = (sweep, None if region.loop is None else region.loop.header, index)
        got = self._marker.get(key)
        if got is None:
            got = self.names.unique("_state")
            self._marker[key] = got
            self.number[got] = index
        return got

    def skip(self, marker, to):
        """The node of ``marker`` does nothing but go on to the node of ``to``."""
        self.alias[marker] = to

    def resolve(self, tree):
        """Replace, in ``tree`` (in place), every marker by its node's number. A marker
        is written as what a state variable is set to or compared with: the value of an
        assignment, or the right side of a comparison."""
        if not self.number:
            return
        numbers = {}
        for marker in self.number:
            key = marker
            while key in self.alias:
                key = self.alias[key]
            numbers[marker] = self.number[key]
        for n in walk(tree):
            if n.__class__ is ast.Assign:
                v = n.value
                if v.__class__ is ast.Name and v.id in numbers:
                    n.value = ast.Constant(numbers[v.id])
            elif n.__class__ is ast.Compare:
                n.comparators = [ast.Constant(numbers[c.id])
                                 if c.__class__ is ast.Name and c.id in numbers else c
                                 for c in n.comparators]
