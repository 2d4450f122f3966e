"""CPU lowering of the adstack intrinsics.

Registered in a registry of its own, installed only in the CPU target context, so another
target can lower the same intrinsics its own way.
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import Registry

from .. import config, intrinsics
from ..errors import AdStackBudgetError, AdStackOverflowError, AdStackUnderflowError
from ..typing.types import AdStackType
from .models import frame_bytes, frame_data_type, heap_header_type
from .names import function_name

registry = Registry("numba_adstack_cpu")
lower = registry.lower

_I64 = ir.IntType(64)
_ZERO = ir.Constant(_I64, 0)
_ONE = ir.Constant(_I64, 1)
_TALLY_ATTR = "_numba_adstack_frame_bytes"


def _entry_alloca(builder, ty, align):
    # In the entry block so it is allocated once per call, not per loop iteration, and
    # uninitialised: only the header is written where adstack() is called.
    with builder.goto_entry_block():
        ptr = builder.alloca(ty)
    ptr.align = align
    return ptr


def budget_message(fname, used, nbytes, budget):
    return (
        "adstack frame budget exceeded in function '%s': its frame adstacks need %d bytes "
        "(this one %d bytes), over the budget of %d bytes. Fixes: use a smaller "
        "ad_stack_size, carry fewer variables across the loop, use storage=\"heap\" for "
        "large stacks, or raise the budget (numba_adstack.config.FRAME_BUDGET_BYTES, "
        "numba_adstack.config.frame_budget(nbytes) or the NUMBA_ADSTACK_FRAME_BUDGET "
        "environment variable)." % (fname, used, nbytes, budget))


def overflow_message(fname, st):
    return ("adstack overflow in function '%s': push past the capacity of %d elements "
            "(%s, frame storage). Pass ad_stack_size=N with N > %d, or use "
            "storage=\"heap\"." % (fname, st.capacity, st.dtype, st.capacity))


def underflow_message(fname, op, st):
    return ("adstack underflow in function '%s': %s on an empty adstack (%s, capacity %d)."
            % (fname, op, st.dtype, st.capacity))


def _charge_frame(builder, fname_thunk, nbytes):
    """Add ``nbytes`` to the frame tally of the LLVM function being built; raise past the
    budget. The tally lives on the llvmlite function object: one per compiled function
    (a parfor body is its own), gone with it, so a failed compile leaves nothing behind."""
    fn = builder.function
    used = getattr(fn, _TALLY_ATTR, 0) + nbytes
    budget = config.get_frame_budget()
    if used > budget:
        raise AdStackBudgetError(budget_message(fname_thunk(), used, nbytes, budget),
                                 highlighting=False)
    setattr(fn, _TALLY_ATTR, used)


# ---------------------------------------------------------------- adstack()

@lower(intrinsics.adstack, types.VarArg(types.Any))
def lower_adstack(context, builder, sig, args):
    st = sig.return_type
    if st.storage == "heap":
        return _new_heap(context, builder, st)
    _charge_frame(builder, lambda: function_name(builder), frame_bytes(context, st))
    count = _entry_alloca(builder, _I64, 8)
    data = _entry_alloca(builder, frame_data_type(context, st), 8)
    builder.store(_ZERO, count)
    return cgutils.make_anonymous_struct(builder, [count, data])


def _raise_memory_error(context, builder, fname, st):
    context.call_conv.return_user_exc(
        builder, MemoryError,
        ("cannot allocate adstack storage (%s, heap) in function '%s'" % (st.dtype, fname),))


def _new_heap(context, builder, st):
    hdr_ty = heap_header_type(context, st)
    elt_ty = hdr_ty.elements[2].pointee
    esize = context.get_abi_sizeof(elt_ty)
    hdr = _entry_alloca(builder, hdr_ty, 8)
    cap = ir.Constant(_I64, st.capacity)
    mi = context.nrt.meminfo_new_varsize_unchecked(
        builder, ir.Constant(_I64, st.capacity * esize))
    with cgutils.if_unlikely(builder, cgutils.is_null(builder, mi)):
        _raise_memory_error(context, builder, function_name(builder), st)
    data = builder.bitcast(context.nrt.meminfo_data(builder, mi), elt_ty.as_pointer())
    builder.store(_ZERO, cgutils.gep_inbounds(builder, hdr, 0, 0))
    builder.store(cap, cgutils.gep_inbounds(builder, hdr, 0, 1))
    builder.store(data, cgutils.gep_inbounds(builder, hdr, 0, 2))
    val = cgutils.create_struct_proxy(st)(context, builder)
    val.header = builder.bitcast(hdr, cgutils.voidptr_t)
    val.meminfo = mi
    return val._getvalue()


# ---------------------------------------------------------------- access helpers

class _View:
    """Pointers to the count and the data of a stack value, for either storage."""

    def __init__(self, context, builder, st, value):
        self.context, self.builder, self.st, self.value = context, builder, st, value
        if st.storage == "heap":
            proxy = cgutils.create_struct_proxy(st)(context, builder, value=value)
            hdr_ty = heap_header_type(context, st)
            self.hdr = builder.bitcast(proxy.header, hdr_ty.as_pointer())
            self.meminfo = proxy.meminfo
            self.elt_ty = hdr_ty.elements[2].pointee
            self.count_ptr = cgutils.gep_inbounds(builder, self.hdr, 0, 0)
        else:
            self.count_ptr = builder.extract_value(value, 0)
            self.data = builder.extract_value(value, 1)
            self.elt_ty = frame_data_type(context, st).element
        self.esize = context.get_abi_sizeof(self.elt_ty)

    def count(self):
        return self.builder.load(self.count_ptr, align=8)

    def set_count(self, n):
        self.builder.store(n, self.count_ptr, align=8)

    def slot(self, index):
        b = self.builder
        if self.st.storage == "heap":
            data = b.load(cgutils.gep_inbounds(b, self.hdr, 0, 2))
            return b.gep(data, [index], inbounds=True)
        return b.gep(self.data, [_ZERO, index], inbounds=True)

    def load(self, index):
        raw = self.builder.load(self.slot(index), align=self.esize)
        return self.context.data_model_manager[self.st.dtype].from_data(self.builder, raw)

    def store(self, index, value):
        raw = self.context.data_model_manager[self.st.dtype].as_data(self.builder, value)
        self.builder.store(raw, self.slot(index), align=self.esize)

    def grow(self, fname):
        """Double the heap buffer (called when full)."""
        b, ctx = self.builder, self.context
        cap_ptr = cgutils.gep_inbounds(b, self.hdr, 0, 1)
        newcap = b.shl(b.load(cap_ptr), _ONE)
        data = ctx.nrt.meminfo_varsize_realloc_unchecked(
            b, self.meminfo, b.mul(newcap, ir.Constant(_I64, self.esize)))
        with cgutils.if_unlikely(b, cgutils.is_null(b, data)):
            _release_on_raise(self)
            _raise_memory_error(ctx, b, fname, self.st)
        b.store(newcap, cap_ptr)
        b.store(b.bitcast(data, self.elt_ty.as_pointer()),
                cgutils.gep_inbounds(b, self.hdr, 0, 2))


def _release_on_raise(view):
    """On an error return out of this function, drop this function's reference to a heap
    stack: Numba does not clean up live variables when a lowered call raises. Inside a
    nopython try block the function goes on running, so the reference is kept."""
    if view.st.storage == "heap" and not getattr(view.builder, "_in_try_block", False):
        view.context.nrt.decref(view.builder, view.st, view.value)


def _check_nonempty(context, builder, view, n, op):
    with cgutils.if_unlikely(builder, builder.icmp_unsigned("==", n, _ZERO)):
        _release_on_raise(view)
        context.call_conv.return_user_exc(
            builder, AdStackUnderflowError,
            (underflow_message(function_name(builder), op, view.st),))


# ---------------------------------------------------------------- push/pop/top/size

@lower(intrinsics.push, AdStackType, types.Any)
def lower_push(context, builder, sig, args):
    st, vty = sig.args
    view = _View(context, builder, st, args[0])
    value = context.cast(builder, args[1], vty, st.dtype)
    n = view.count()
    if st.storage == "heap":
        cap = builder.load(cgutils.gep_inbounds(builder, view.hdr, 0, 1), align=8)
        with cgutils.if_unlikely(builder, builder.icmp_unsigned(">=", n, cap)):
            view.grow(function_name(builder))
    else:
        full = builder.icmp_unsigned(">=", n, ir.Constant(_I64, st.capacity))
        with cgutils.if_unlikely(builder, full):
            context.call_conv.return_user_exc(
                builder, AdStackOverflowError, (overflow_message(function_name(builder), st),))
    view.store(n, value)
    view.set_count(builder.add(n, _ONE))
    return context.get_dummy_value()


@lower(intrinsics.pop, AdStackType)
def lower_pop(context, builder, sig, args):
    st = sig.args[0]
    view = _View(context, builder, st, args[0])
    n = view.count()
    _check_nonempty(context, builder, view, n, "pop")
    n1 = builder.sub(n, _ONE)
    value = view.load(n1)
    view.set_count(n1)
    return value


@lower(intrinsics.top, AdStackType)
def lower_top(context, builder, sig, args):
    st = sig.args[0]
    view = _View(context, builder, st, args[0])
    n = view.count()
    _check_nonempty(context, builder, view, n, "top")
    return view.load(builder.sub(n, _ONE))


@lower(intrinsics.size, AdStackType)
def lower_size(context, builder, sig, args):
    return _View(context, builder, sig.args[0], args[0]).count()


@lower(intrinsics.clear, AdStackType)
def lower_clear(context, builder, sig, args):
    _View(context, builder, sig.args[0], args[0]).set_count(_ZERO)
    return context.get_dummy_value()


@lower(intrinsics.overflowed, AdStackType)
def lower_overflowed(context, builder, sig, args):
    # On the CPU a push past capacity raises, so a live stack never has overflowed.
    return cgutils.false_bit


_installed = False


def _install_now():
    global _installed
    if not _installed:
        from numba.core.registry import cpu_target
        cpu_target.target_context.install_registry(registry)
        _installed = True


def install():
    """Install the CPU implementations in the CPU target context, just before the first
    adstack intrinsic is typed (the context is complete by then)."""
    from ..typing import templates
    if _install_now not in templates.before_typing_hooks:
        templates.before_typing_hooks.append(_install_now)
