"""Binomial checkpointing schedules (Griewank and Walther's ``revolve``, ACM TOMS 2000).

A checkpointed loop of ``n`` iterations is cut into *steps* of ``seg`` iterations. With
``c`` snapshot slots (slot 0 holds the state before the first step), the steps are
reversed by the binomial schedule: to reverse steps ``[a, b)`` with the snapshot at ``a``
and ``s - 1`` free slots, advance from ``a`` to a split point ``m``, store the state there,
reverse ``[m, b)`` with ``s - 1`` snapshots, then ``[a, m)`` with ``s``. With ``r`` the
least number with ``C(s + r, s) >= b - a``, the split puts at most ``C(s - 1 + r, s - 1)``
steps on the right and at most ``C(s + r - 1, s)`` on the left, so that every step is run
forward at most about ``r + 1`` times (``r`` grows like ``n ** (1 / s)``, and like
``log n`` when ``s`` grows with it).

A ``while`` loop (or one left by ``break``) does not know its trip count when it starts:
its replay follows an *online* schedule (:func:`online_plan`): it stores the state every
``k`` iterations in up to ``L`` slots, and when they are full keeps every other one and
doubles ``k`` (periodic checkpoints, thinned). Once the loop has ended its count is known,
and the sweep reverses the segments between stored states from the last, each by the
binomial schedule with the slots the earlier segments leave free (recursive refinement).

The schedule is an ``(k, 4)`` array of actions ``(op, first, end, slot)`` in iterations;
the backward interprets it (:mod:`..emit.checkpoint`). The replay runs the actions up to
the first ``TAPE`` (the last step, run keeping its history); the sweep runs the rest,
starting with its ``REVERSE``.
"""
import numpy as np
from numba import njit

STORE, RESTORE, ADVANCE, TAPE, REVERSE = 0, 1, 2, 3, 4


@njit(cache=False)
def _beta(s, t):
    """C(s + t, s), saturating far past any loop length."""
    r = 1.0
    for i in range(1, s + 1):
        r = r * (t + i) / i
    return r if r < 4e18 else 4e18


@njit(cache=False)
def _split(length, free):
    """Steps on the left of the first split of ``length`` steps, with the snapshot at
    their start and ``free`` slots: ``s = free + 1`` snapshots in Griewank's count."""
    s = free + 1
    r = 0
    while _beta(s, r) < length:
        r += 1
    right_max = _beta(s - 1, r)
    left = length - right_max if length > right_max else 1
    left_max = _beta(s, r - 1) if r > 0 else 1.0
    if left > left_max:
        left = int(left_max)
    if left < 1:
        left = 1
    if left > length - 1:
        left = length - 1
    return int(left)


@njit(cache=False)
def revolve_steps(nsteps, snapshots):
    """The actions reversing ``nsteps`` steps with ``snapshots`` slots, in steps:
    ``(op, first step, end step, slot)`` rows (see the module's docstring)."""
    out = []
    pos = 0                         # the step the live state is at (-1: unknown)
    at = np.full(max(snapshots, 1), -1, np.int64)   # the step each slot holds
    free = []
    for k in range(snapshots - 1, 0, -1):
        free.append(k)
    out.append((STORE, 0, 0, 0))
    at[0] = 0
    # Work items: (kind, a, b, free slots, slot of a); kind 0 reverses, 1 frees a slot.
    work = [(0, 0, nsteps, snapshots - 1, 0)]
    while len(work) > 0:
        kind, a, b, nfree, slot = work.pop()
        if kind == 1:
            at[slot] = -1
            free.append(slot)
            continue
        if b - a <= 0:
            continue
        if b - a == 1 or nfree == 0 or len(free) == 0:
            # Each step from the last: from the snapshot at a, advance, keep, reverse.
            for i in range(b - 1, a - 1, -1):
                if pos != a:
                    out.append((RESTORE, a, a, slot))
                if i > a:
                    out.append((ADVANCE, a, i, -1))
                out.append((TAPE, i, i + 1, -1))
                out.append((REVERSE, i, i + 1, -1))
                pos = -1
            continue
        m = a + _split(b - a, nfree)
        new = free.pop()
        if pos != a:
            out.append((RESTORE, a, a, slot))
        out.append((ADVANCE, a, m, -1))
        out.append((STORE, m, m, new))
        at[new] = m
        pos = m
        work.append((0, a, m, nfree, slot))
        work.append((1, 0, 0, 0, new))
        work.append((0, m, b, nfree - 1, new))
    res = np.empty((len(out), 4), np.int64)
    for k in range(len(out)):
        op, f, e, s = out[k]
        res[k, 0] = op
        res[k, 1] = f
        res[k, 2] = e
        res[k, 3] = s
    return res


@njit(cache=False)
def schedule(n, seg, snapshots):
    """The actions for a loop of ``n`` iterations, steps of ``seg`` iterations and
    ``snapshots`` slots, in iterations (the last step may be shorter)."""
    if seg < 1:
        seg = 1
    if snapshots < 1:
        snapshots = 1
    nsteps = (n + seg - 1) // seg
    if nsteps == 0:
        res = np.zeros((2, 4), np.int64)
        res[0, 0] = TAPE
        res[1, 0] = REVERSE
        return res
    acts = revolve_steps(nsteps, snapshots)
    for k in range(acts.shape[0]):
        acts[k, 1] = min(acts[k, 1] * seg, n)
        acts[k, 2] = min(acts[k, 2] * seg, n)
    return acts


@njit(cache=False)
def forward_end(acts):
    """Index of the first ``TAPE``: the replay runs the actions up to it."""
    for k in range(acts.shape[0]):
        if acts[k, 0] == TAPE:
            return k
    return acts.shape[0] - 1


def forward_steps(acts):
    """Iterations run forward by a schedule (``ADVANCE`` and ``TAPE``): its cost."""
    acts = np.asarray(acts)
    run = (acts[:, 0] == ADVANCE) | (acts[:, 0] == TAPE)
    return int(np.sum(acts[run, 2] - acts[run, 1]))


class CheckpointNeeded(MemoryError):
    """The history a loop would keep is past the memory budget (``checkpoint="auto"``):
    the dispatcher makes the call again with a checkpointed backward."""


@njit(cache=False)
def guard(n, per_iteration, budget):
    """``checkpoint="auto"``: raise :class:`CheckpointNeeded` when ``n`` iterations keeping
    ``per_iteration`` bytes each would be past ``budget`` bytes."""
    if n * per_iteration > budget:
        raise CheckpointNeeded("the history of a loop is past the memory budget: "
                               "checkpoint it (grad_jit(checkpoint='revolve'))")


@njit(cache=False)
def _one_iteration_fits(per_iteration, half):
    """Segments are at least one iteration long: raise when the history one iteration
    keeps (its nested loops' included) is past half the budget."""
    if per_iteration > half:
        raise MemoryError("The history the gradient keeps does not fit in memory: one "
                          "iteration of the checkpointed loop keeps more than half the "
                          "memory budget; raise memory_budget, or run fewer inner steps "
                          "per iteration")


@njit(cache=False)
def plan_schedule(n, per_iteration, state_bytes, budget, snapshots):
    """The schedule of a loop of ``n`` iterations keeping ``per_iteration`` bytes each,
    whose state is ``state_bytes``. ``snapshots > 0``: that many slots; ``budget >= 0``:
    half of it for the history of one segment, half for the snapshots. Without a budget,
    segments are one iteration long."""
    seg = 1
    c = snapshots
    if budget >= 0:
        half = budget // 2
        seg = max(1, half // max(per_iteration, 1))
        nsteps = (n + seg - 1) // seg
        if c <= 0:
            c = min(half // max(state_bytes, 1), nsteps + 1)
            if c < 2 and nsteps > 1:
                raise MemoryError("checkpointing: two snapshots of the loop's state do "
                                  "not fit in the memory budget; raise memory_budget")
            c = max(c, 1)
        _one_iteration_fits(per_iteration, half)
    elif c <= 0:
        c = 2
    return schedule(n, seg, c)


@njit(cache=False)
def online_plan(per_iteration, state_bytes, budget, snapshots):
    """A loop of unknown trip count: ``(seg, c, L)``: segments of ``seg`` iterations,
    ``c`` snapshot slots, at most ``L`` of them (even, at least 2) filled by the replay,
    the others left to the sweep. As :func:`plan_schedule` for the budget's halves."""
    seg = 1
    c = snapshots
    if budget >= 0:
        half = budget // 2
        seg = max(1, half // max(per_iteration, 1))
        if c <= 0:
            c = half // max(state_bytes, 1)
            if c < 2:
                raise MemoryError("checkpointing: two snapshots of the loop's state do "
                                  "not fit in the memory budget; raise memory_budget")
        _one_iteration_fits(per_iteration, half)
    elif c <= 0:
        c = 4
    if c > 1 << 20:
        c = 1 << 20             # far past what thinning ever needs
    lim = max(2, (c // 2) // 2 * 2)
    res = np.empty(3, np.int64)
    res[0] = seg
    res[1] = max(c, lim)
    res[2] = lim
    return res


@njit(cache=False)
def guard_count(per_iteration, budget):
    """``checkpoint="auto"`` on a loop of unknown trip count: the iteration at which its
    history would pass ``budget`` bytes (its guard raises there)."""
    return max(1, budget // max(per_iteration, 1))


@njit(cache=False)
def need_checkpoint():
    raise CheckpointNeeded("the history of a loop is past the memory budget: "
                           "checkpoint it (grad_jit(checkpoint='revolve'))")


@njit(cache=False)
def slot_count(acts):
    """How many snapshot slots a schedule uses."""
    c = 1
    for k in range(acts.shape[0]):
        if acts[k, 0] == STORE and acts[k, 3] + 1 > c:
            c = acts[k, 3] + 1
    return c
