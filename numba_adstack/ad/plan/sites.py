"""Sites: how often each definition runs within its reversal unit.

A *reversal unit* is the code that is replayed and then reversed as one piece: the whole
function, or one iteration of a fused loop. A value defined inside loops of its unit is
overwritten while the unit runs, so the sweep must get it back (from a stack, or by
recomputing it); a value defined once per unit is still in its variable when the sweep
needs it.
"""


class Sites:
    """Definition sites relative to the reversal units of a set of fused loops.

    ``aliases`` maps names the plan adds (the kept derivative ``y.d`` of ``y = sin(x)``)
    to the IR variable whose definition site they share.
    """

    def __init__(self, facts, fused, aliases=None):
        self.facts = facts
        self.fused = frozenset(fused)
        self.aliases = dict(aliases or {})
        self._once = {}

    def unit_base(self, block):
        """Depth of the innermost fused loop holding ``block`` (0 outside of any)."""
        for lp in self.facts.s.enclosing(block):
            if lp in self.fused:
                return lp.depth
        return 0

    def site_loops(self, loops, block):
        """The loops of ``loops`` that repeat a site within its reversal unit."""
        base = self.unit_base(block)
        return [lp for lp in loops if lp.depth > base]

    def has_def(self, name):
        name = self.aliases.get(name, name)
        return name in self.facts.defs or name in self.facts.phis

    def def_site_loops(self, name):
        """Loops repeating the definition(s) of ``name``, per definition site: a block, or
        for a phi each incoming edge."""
        name = self.aliases.get(name, name)
        f = self.facts
        if name in f.phis:
            label = f.phis[name]
            return {(pred, label): self.site_loops(f.s.edge_loops(pred, label), label)
                    for pred in f.phi_incoming(name)}
        label = f.defs[name][0]
        return {label: self.site_loops(f.s.enclosing(label), label)}

    def once(self, name):
        """Is ``name`` defined at most once per reversal unit (still in its variable when
        the sweep reads it)?"""
        got = self._once.get(name)
        if got is None:
            got = self.has_def(name) and not any(self.def_site_loops(name).values())
            self._once[name] = got
        return got

    def edge_pushes(self, e):
        """Do the phi copies on edge ``e`` run repeatedly within their unit?"""
        return bool(self.site_loops(self.facts.s.edge_loops(*e), e[1]))

    def site_repeats(self, label):
        return bool(self.site_loops(self.facts.s.enclosing(label), label))

    def def_loc(self, name):
        return self.facts.def_loc(self.aliases.get(name, name))
