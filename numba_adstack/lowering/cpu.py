"""CPU lowering of the adstack intrinsics.

Registered in a registry of its own, installed only in the CPU target context, so another
target can lower the same intrinsics its own way.
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import Registry

from .. import config, intrinsics
from ..errors import AdStackBudgetError, AdStackOverflowError, AdStackUnderflowError
from ..typing import templates
from ..typing.types import AdStackType
from . import heap
from .models import frame_bytes, frame_data_type
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
        "(this one %d bytes), over the budget of %d bytes. Fixes: smaller capacities, "
        "heap storage (\"heap\") for the large stacks, or a larger budget "
        "(numba_adstack.config.FRAME_BUDGET_BYTES, numba_adstack.config.frame_budget(nbytes) "
        "or the NUMBA_ADSTACK_FRAME_BUDGET environment variable)."
        % (fname, used, nbytes, budget))


def overflow_message(fname, st):
    return ("adstack overflow in function '%s': push past the capacity of %d elements "
            "(%s, frame storage). Fix: a larger capacity, or heap storage, which grows."
            % (fname, st.capacity, st.dtype))


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


def oom_message(fname, st, nbytes):
    what = "" if nbytes is None else " of %d bytes" % nbytes
    return ("out of memory in function '%s': cannot allocate adstack storage%s (%s, heap). "
            "The history the gradient keeps does not fit in memory: differentiate fewer "
            "steps at a time." % (fname, what, st.dtype))


def _new_heap(context, builder, st):
    return heap.new_heap(context, builder, st, function_name(builder), oom_message)


# ---------------------------------------------------------------- access helpers

class _View:
    """Pointers to the count and the data of a stack value, for either storage."""

    def __init__(self, context, builder, st, value):
        self.context, self.builder, self.st, self.value = context, builder, st, value
        if st.storage == "heap":
            proxy = cgutils.create_struct_proxy(st)(context, builder, value=value)
            hdr_ty = heap.header_type(context, st)
            self.hdr = builder.bitcast(proxy.header, hdr_ty.as_pointer())
            self.meminfo = proxy.meminfo
            self.elt_ty = hdr_ty.elements[2].pointee
            self.count_ptr = cgutils.gep_inbounds(builder, self.hdr, 0, 0)
        else:
            self.count_ptr = builder.extract_value(value, 0)
            self.data = builder.extract_value(value, 1)
            self.elt_ty = frame_data_type(context, st).element
        self.esize = _element_size(context, self.elt_ty)

    def count(self):
        return self.builder.load(self.count_ptr, align=8)

    def set_count(self, n):
        self.builder.store(n, self.count_ptr, align=8)

    def capacity(self):
        if self.st.storage == "heap":
            return self.builder.load(cgutils.gep_inbounds(self.builder, self.hdr, 0, 1),
                                     align=8)
        return ir.Constant(_I64, self.st.capacity)

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

    def grow(self, need):
        """Make room for ``need`` elements in all (a heap stack)."""
        heap.grow(self, need, function_name(self.builder), oom_message)


_element_sizes = {}


def _element_size(context, elt_ty):
    # Asked of LLVM's data layout through a module parsed for it: once per element type.
    key = (context.address_size, str(elt_ty))
    size = _element_sizes.get(key)
    if size is None:
        size = _element_sizes[key] = context.get_abi_sizeof(elt_ty)
    return size


def _check_nonempty(context, builder, view, n, op):
    with cgutils.if_unlikely(builder, builder.icmp_unsigned("==", n, _ZERO)):
        heap.raise_error(context, builder, AdStackUnderflowError,
                         underflow_message(function_name(builder), op, view.st))


# ---------------------------------------------------------------- push/pop/top/size

@lower(intrinsics.push, AdStackType, types.Any)
def lower_push(context, builder, sig, args):
    st, vty = sig.args
    view = _View(context, builder, st, args[0])
    value = context.cast(builder, args[1], vty, st.dtype)
    n = view.count()
    full = builder.icmp_unsigned(">=", n, view.capacity())
    with cgutils.if_unlikely(builder, full):
        if st.storage == "heap":
            view.grow(builder.add(n, _ONE))
        else:
            heap.raise_error(context, builder, AdStackOverflowError,
                             overflow_message(function_name(builder), st))
    view.store(n, value)
    view.set_count(builder.add(n, _ONE))
    return context.get_dummy_value()


@lower(intrinsics.reserve, AdStackType, types.Integer)
def lower_reserve(context, builder, sig, args):
    """Room for ``n`` more pushes: a heap stack grows once now rather than while they run;
    a frame stack has the room it has (a push past it raises)."""
    st, nty = sig.args
    if st.storage != "heap":
        return context.get_dummy_value()
    view = _View(context, builder, st, args[0])
    n = context.cast(builder, args[1], nty, types.int64)
    need = builder.add(view.count(), n)
    with cgutils.if_unlikely(builder, builder.icmp_signed(">", need, view.capacity())):
        view.grow(need)
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
    if _install_now not in templates.before_typing_hooks:
        templates.before_typing_hooks.append(_install_now)
