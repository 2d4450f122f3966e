"""Loops over a generator: ``for v in gen(x): BODY``, with ``gen`` an ``@njit`` (or plain)
generator function, become the generator's own code with each ``yield`` running the body.

The capture inlines the generator's IR at its call (as any callee) and then rewires the
blocks, so that the function has no generator left::

    (code between the call and the loop)
    gen's code, where each   yield e_k   is
        v = e_k; resume = k; BODY        (BODY's back edge and `continue`: go on after
                                          yield number `resume`)
    gen returns                        -> the loop's exit (the loop is exhausted)
    `break` in BODY                    -> where it went (the generator is dropped)

This is the order in which Python runs them: a generator's code starts at the first
``next`` (after the code between the call and the loop), runs up to a ``yield``, and
resumes after it when the loop body asks for the next value. The rewrite then sees loops,
branches and assignments only.

Only a generator consumed by one ``for`` loop is rewritten this way; any other use (``list``,
``sum``, ``zip``, ``next``) is refused by name, with what to write instead.

Reads the untyped IR before SSA (variables may be assigned in several blocks).
"""
import operator

from numba.core import ir
from numba.core.ir_utils import build_definitions

from .ir_emitter import fresh_label


def _users(fir, names):
    """Statements reading any of ``names`` (and the copies of them, added to ``names``)."""
    names = set(names)
    changed = True
    while changed:
        changed = False
        for blk in fir.blocks.values():
            for stmt in blk.body:
                if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var) and \
                        stmt.value.name in names and stmt.target.name not in names:
                    names.add(stmt.target.name)
                    changed = True
    users = []
    for label, blk in fir.blocks.items():
        for stmt in blk.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var) and \
                    stmt.value.name in names:
                continue
            read = stmt.list_vars()
            if isinstance(stmt, ir.Assign):
                v = stmt.value
                read = [v] if isinstance(v, ir.Var) else \
                    v.list_vars() if isinstance(v, (ir.Expr, ir.Yield)) else []
            if any(v.name in names for v in read):
                users.append((label, stmt))
    return users, names


def _consuming_loop(fir, gen_var):
    """(block label of the ``getiter``, the names holding the iterator, header label) of
    the one ``for`` loop over the generator held by ``gen_var``, or None when it is used
    otherwise."""
    users, _ = _users(fir, [gen_var.name])
    if len(users) != 1:
        return None
    label, stmt = users[0]
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr)
            and stmt.value.op == "getiter"):
        return None
    iters, names = _users(fir, [stmt.target.name])
    if len(iters) != 1:
        return None
    header, nxt = iters[0]
    if not (isinstance(nxt, ir.Assign) and isinstance(nxt.value, ir.Expr)
            and nxt.value.op == "iternext"):
        return None
    if not isinstance(fir.blocks[header].terminator, ir.Branch) or \
            not _jumps_to(fir.blocks[label], header):
        return None
    return label, names, header


def inline_loop_over(worker, fir, block, i, callee, refuse):
    """Inline the generator ``callee`` called at ``block.body[i]`` with Numba's inliner
    ``worker`` (whose check for ``yield`` is left out for it), then rewire it into the loop
    consuming it; the new blocks, as the inliner gives them. ``refuse(what)`` raises."""
    call_stmt = block.body[i]
    validator, worker.validator = worker.validator, None
    try:
        _, _, _, new_blocks = worker.inline_function(fir, block, i, callee)
    finally:
        worker.validator = validator
    rewrite_loop(fir, block, new_blocks[0][0], [lb for lb, _ in new_blocks[1:]], call_stmt,
                 lambda what: refuse("%s (the generator %s)" % (what, callee.__name__)))
    return new_blocks


def rewrite_loop(fir, block, cont_label, inlined_labels, call_stmt, refuse):
    """Rewire the generator inlined at ``call_stmt`` (its blocks ``inlined_labels``; the
    caller's ``block`` jumps to their entry, their returns jump to ``cont_label``) into
    the loop that consumes it (see the module docstring). ``refuse(what)`` raises."""
    loop = _consuming_loop(fir, call_stmt.target)
    if loop is None:
        refuse("a generator used other than by one for loop (list(...), sum(...), zip, "
               "next): loop over it with for, or return an array of its values")
    iter_label, iterator, header = loop
    head = fir.blocks[header]
    entry = block.terminator.target
    firsts = [s.target for s in head.body if isinstance(s, ir.Assign) and
              isinstance(s.value, ir.Expr) and s.value.op == "pair_first"]
    copies = [s for s in head.body[:-1] if isinstance(s, ir.Assign) and not (
        isinstance(s.value, ir.Expr) and s.value.op in ("iternext", "pair_first",
                                                          "pair_second"))]
    if len(firsts) != 1:
        refuse("a for loop over a generator of a form not read")
    first = firsts[0]
    body_label, exit_label = head.terminator.truebr, head.terminator.falsebr

    # The code between the call and the loop runs first; the generator starts at the loop.
    for blk in fir.blocks.values():
        blk.body = [s for s in blk.body if not (
            isinstance(s, ir.Assign) and s.target.name in iterator)]
    block.body[-1] = ir.Jump(cont_label, block.loc)
    _retarget(fir, [iter_label], header, entry)
    # Its returns end the loop.
    _retarget(fir, inlined_labels, cont_label, exit_label)

    yields = [(label, j) for label in inlined_labels
              for j, s in enumerate(fir.blocks[label].body)
              if isinstance(s, ir.Assign) and isinstance(s.value, ir.Yield)]
    scope, loc = head.scope, head.loc
    resume = scope.redefine("$gen_resume", loc)
    after = []
    for k, (label, j) in enumerate(yields):
        blk = fir.blocks[label]
        stmt = blk.body[j]
        rest = ir.Block(scope, stmt.loc)
        rest.body = [ir.Assign(ir.Const(None, stmt.loc), stmt.target, stmt.loc)] + \
            blk.body[j + 1:]
        rest_label = fresh_label(fir)
        fir.blocks[rest_label] = rest
        after.append(rest_label)
        blk.body = blk.body[:j] + [
            ir.Assign(ir.Const(k, stmt.loc), resume, stmt.loc),
            ir.Assign(stmt.value.value, first, stmt.loc)] + \
            [ir.Assign(c.value, c.target, c.loc) for c in copies] + \
            [ir.Jump(body_label, stmt.loc)]
    # The body's back edges (and `continue`) resume the generator.
    del fir.blocks[header]
    loop_labels = [lb for lb in fir.blocks if lb not in inlined_labels
                   and lb != iter_label and _jumps_to(fir.blocks[lb], header)]
    _retarget(fir, loop_labels, header, _dispatch(fir, scope, loc, resume, after))
    fir._definitions = build_definitions(fir.blocks)


def _dispatch(fir, scope, loc, resume, targets):
    """A block going on at ``targets[resume]``."""
    if not targets:
        blk = ir.Block(scope, loc)
        blk.body = [ir.StaticRaise(AssertionError, ("unreachable",), loc)]
        label = fresh_label(fir)
        fir.blocks[label] = blk
        return label
    label = targets[-1]
    for k in range(len(targets) - 2, -1, -1):
        blk = ir.Block(scope, loc)
        const = scope.redefine("$gen_k", loc)
        test = scope.redefine("$gen_is", loc)
        blk.body = [ir.Assign(ir.Const(k, loc), const, loc),
                    ir.Assign(ir.Expr.binop(operator.eq, resume, const, loc), test, loc),
                    ir.Branch(test, targets[k], label, loc)]
        label = fresh_label(fir)
        fir.blocks[label] = blk
    return label


def _jumps_to(blk, label):
    term = blk.terminator
    return isinstance(term, ir.Jump) and term.target == label or \
        isinstance(term, ir.Branch) and label in (term.truebr, term.falsebr)


def _retarget(fir, labels, old, new):
    for lb in labels:
        blk = fir.blocks.get(lb)
        if blk is None or not blk.body:
            continue
        term = blk.body[-1]
        if isinstance(term, ir.Jump) and term.target == old:
            blk.body[-1] = ir.Jump(new, term.loc)
        elif isinstance(term, ir.Branch) and old in (term.truebr, term.falsebr):
            blk.body[-1] = ir.Branch(term.cond, new if term.truebr == old else term.truebr,
                                     new if term.falsebr == old else term.falsebr, term.loc)

