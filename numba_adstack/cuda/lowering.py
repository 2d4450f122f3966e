"""Lowering of the adstack intrinsics for the numba.cuda target.

Typing is shared with the CPU: the templates of :mod:`numba_adstack.typing` live in Numba's
builtin typing registry, whose third-party entries numba-cuda installs in its own typing
context. Lowering is not shared: the CPU lowering sits in a registry installed only in the
CPU target, and this module registers the CUDA one in numba-cuda's builtin lowering registry
(``numba.cuda.core.imputils``), which only CUDA target contexts install.

Layout on CUDA: per stack, three per-thread allocas in the kernel's entry block, an ``i32``
count, an ``i32`` overflow flag and the ``[capacity x T]`` data (bool is i8); the value of
the stack is the triple of pointers. NVVM keeps the count and the flag in registers and
places the data in local memory (``__local_depot`` in the PTX), so a push or pop touches
local memory once, for the element. A GPU thread cannot raise, so it records an overflow
in the flag:

There is no frame budget on CUDA, but a thread cannot address more than 512 KiB of local
memory: past :data:`LOCAL_MEMORY_LIMIT_BYTES` of stacks in one function, compilation raises
:class:`AdStackLocalMemoryError`.
"""
import sys

from llvmlite import ir
from numba.core import types
from numba.cuda import cgutils, nvvmutils
from numba.cuda.core.imputils import lower_builtin
from numba.cuda.datamodel import models
from numba.cuda.models import register_model

from .. import intrinsics
from ..typing.types import AdStackType
from .errors import AdStackCudaError, AdStackLocalMemoryError
from ..lowering.names import demangle
from .layout import DATA_ALIGN, LOCAL_MEMORY_LIMIT_BYTES, stack_bytes

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_I8 = ir.IntType(8)
_ZERO = ir.Constant(_I32, 0)
_ONE = ir.Constant(_I32, 1)
_TALLY_ATTR = "_numba_adstack_cuda_local_bytes"


# ---------------------------------------------------------------- data model

def stack_data_type(context, fe_type):
    """LLVM type of the entries of a stack of type ``fe_type`` on CUDA."""
    return ir.ArrayType(context.get_data_type(fe_type.dtype), fe_type.capacity)


class _LocalModel(models.PrimitiveModel):
    """A local stack: ``{i32* count, i32* overflowed, [capacity x T]* data}``, pointers to
    its entry-block storage (heap storage is refused when the stack is created)."""

    def __init__(self, dmm, fe_type):
        data = ir.ArrayType(dmm[fe_type.dtype].get_data_type(), fe_type.capacity)
        super().__init__(dmm, fe_type, ir.LiteralStructType(
            [_I32.as_pointer(), _I32.as_pointer(), data.as_pointer()]))


class _GlobalModel(models.PrimitiveModel):
    """A global stack: ``{i32* count, i32* overflowed, T* first, i64 stride, i32 capacity}``:
    entry k of this thread is at ``first + k * stride`` in a global-memory buffer."""

    def __init__(self, dmm, fe_type):
        elt = dmm[fe_type.dtype].get_data_type()
        super().__init__(dmm, fe_type, ir.LiteralStructType(
            [_I32.as_pointer(), _I32.as_pointer(), elt.as_pointer(), _I64, _I32]))


@register_model(AdStackType)
class CudaAdStackModel(models.DataModel):
    """Dispatches to the local or global model by the type's storage."""

    def __new__(cls, dmm, fe_type):
        if fe_type.storage == "global":
            return _GlobalModel(dmm, fe_type)
        return _LocalModel(dmm, fe_type)


# ---------------------------------------------------------------- names for messages

def function_name(builder):
    """Qualified name of the Python kernel or device function being lowered by ``builder``."""
    llname = builder.function.name
    frame = sys._getframe(1)
    while frame is not None:
        low = frame.f_locals.get("self")
        fndesc = getattr(low, "fndesc", None)
        if fndesc is not None and getattr(fndesc, "mangled_name", None) == llname:
            return "%s.%s" % (fndesc.modname, fndesc.qualname)
        frame = frame.f_back
    return demangle(llname)


def local_memory_message(fname, used, nbytes, limit):
    return (
        "adstacks of CUDA function '%s' need %d bytes of local memory per thread (this "
        "stack %d bytes), over the %d bytes a GPU thread can address. Fixes: use a smaller "
        "ad_stack_size, carry fewer variables across the loop, or split the kernel."
        % (fname, used, nbytes, limit))


def _charge_local(builder, nbytes):
    fn = builder.function
    used = getattr(fn, _TALLY_ATTR, 0) + nbytes
    if used > LOCAL_MEMORY_LIMIT_BYTES:
        raise AdStackLocalMemoryError(local_memory_message(
            function_name(builder), used, nbytes, LOCAL_MEMORY_LIMIT_BYTES))
    setattr(fn, _TALLY_ATTR, used)


def local_stack_bytes(llvm_function):
    """Bytes of adstack storage lowered so far into ``llvm_function`` (an llvmlite function)."""
    return getattr(llvm_function, _TALLY_ATTR, 0)


# ---------------------------------------------------------------- lowering

class _View:
    def __init__(self, context, builder, st, value):
        self.context, self.builder, self.st = context, builder, st
        self.count_ptr = builder.extract_value(value, 0)
        self.flag_ptr = builder.extract_value(value, 1)
        self.data = builder.extract_value(value, 2)
        if st.storage == "global":
            self.stride = builder.extract_value(value, 3)
            self.cap = builder.extract_value(value, 4)
        else:
            self.cap = ir.Constant(_I32, st.capacity)

    def count(self):
        return self.builder.load(self.count_ptr)

    def set_count(self, n):
        self.builder.store(n, self.count_ptr)

    def raise_flag(self, cond=None):
        b = self.builder
        if cond is None:
            b.store(_ONE, self.flag_ptr)
        else:
            old = b.load(self.flag_ptr)
            b.store(b.or_(old, b.zext(cond, _I32)), self.flag_ptr)

    def slot(self, index):
        b = self.builder
        if self.st.storage == "global":
            return b.gep(self.data, [b.mul(b.zext(index, _I64), self.stride)], inbounds=True)
        return b.gep(self.data, [_ZERO, index], inbounds=True)

    def load(self, index):
        dm = self.context.data_model_manager[self.st.dtype]
        return dm.from_data(self.builder, self.builder.load(self.slot(index)))

    def store(self, index, value):
        dm = self.context.data_model_manager[self.st.dtype]
        self.builder.store(dm.as_data(self.builder, value), self.slot(index))


@lower_builtin(intrinsics.adstack, types.VarArg(types.Any))
def cuda_adstack(context, builder, sig, args):
    st = sig.return_type
    if st.storage != "frame":
        raise AdStackCudaError(
            "adstack(): storage=%r is not supported in CUDA function '%s'; on a GPU every "
            "stack lives in local memory (storage='frame')."
            % (st.storage, function_name(builder)))
    _charge_local(builder, stack_bytes(st))
    # Entry block: one slot per thread for the whole call, not one per loop iteration.
    # Only the count and the flag are initialised, where adstack() is called.
    with builder.goto_entry_block():
        count = builder.alloca(_I32)
        flag = builder.alloca(_I32)
        data = builder.alloca(stack_data_type(context, st))
    data.align = DATA_ALIGN
    builder.store(_ZERO, count)
    builder.store(_ZERO, flag)
    return cgutils.make_anonymous_struct(builder, [count, flag, data])


def _stack_header(builder):
    # Entry block: one count and one flag per thread for the whole call.
    with builder.goto_entry_block():
        count = builder.alloca(_I32)
        flag = builder.alloca(_I32)
    builder.store(_ZERO, count)
    builder.store(_ZERO, flag)
    return count, flag


def _linear_thread(builder):
    """This thread's index in the launch, and the launch's number of threads (i64)."""
    def sreg(name):
        return builder.zext(nvvmutils.call_sreg(builder, name), _I64)
    ntid = [sreg("ntid." + a) for a in "xyz"]
    nctaid = [sreg("nctaid." + a) for a in "xyz"]
    block = builder.mul(builder.mul(ntid[0], ntid[1]), ntid[2])
    cta = builder.add(builder.mul(builder.add(builder.mul(sreg("ctaid.z"), nctaid[1]),
                                              sreg("ctaid.y")), nctaid[0]), sreg("ctaid.x"))
    inner = builder.add(builder.mul(builder.add(builder.mul(sreg("tid.z"), ntid[1]),
                                                sreg("tid.y")), ntid[0]), sreg("tid.x"))
    nthreads = builder.mul(block, builder.mul(builder.mul(nctaid[0], nctaid[1]), nctaid[2]))
    return builder.add(builder.mul(cta, block), inner), nthreads


@lower_builtin(intrinsics.launch_stack, types.Any, types.IntegerLiteral, types.IntegerLiteral,
               types.Array, types.Array)
def cuda_launch_stack(context, builder, sig, args):
    """A stack sized at launch: local (as ``adstack``), or this thread's slice of the
    launch's global buffer: ``gmeta[2 i]`` is the byte offset of stack ``i`` in ``gstack``,
    ``gmeta[2 i + 1]`` its capacity; entry k of thread t is element ``k * nthreads + t``."""
    st = sig.return_type
    if st.storage != "global":
        return cuda_adstack(context, builder, sig, args)
    index = sig.args[2].literal_value
    gstack = context.make_array(sig.args[3])(context, builder, args[3])
    gmeta = context.make_array(sig.args[4])(context, builder, args[4])
    meta = builder.bitcast(gmeta.data, _I64.as_pointer())
    offset = builder.load(builder.gep(meta, [ir.Constant(_I64, 2 * index)]))
    cap = builder.load(builder.gep(meta, [ir.Constant(_I64, 2 * index + 1)]))
    tid, nthreads = _linear_thread(builder)
    elt = context.get_data_type(st.dtype)
    base = builder.bitcast(builder.gep(builder.bitcast(gstack.data, _I8.as_pointer()),
                                       [offset]), elt.as_pointer())
    first = builder.gep(base, [tid])
    count, flag = _stack_header(builder)
    return cgutils.make_anonymous_struct(
        builder, [count, flag, first, nthreads, builder.trunc(cap, _I32)])


@lower_builtin(intrinsics.push, AdStackType, types.Any)
def cuda_push(context, builder, sig, args):
    st, vty = sig.args
    view = _View(context, builder, st, args[0])
    value = context.cast(builder, args[1], vty, st.dtype)
    n = view.count()
    fits = builder.icmp_unsigned("<", n, view.cap)
    with builder.if_else(fits, likely=True) as (then, otherwise):
        with then:
            view.store(n, value)
            view.set_count(builder.add(n, _ONE))
        with otherwise:
            view.raise_flag()
    return context.get_dummy_value()


def _read_top(context, builder, sig, args, remove):
    st = sig.args[0]
    view = _View(context, builder, st, args[0])
    n = view.count()
    nonempty = builder.icmp_unsigned("!=", n, _ZERO)
    # Branch-free and always in bounds: an empty stack reads slot 0 and yields 0.
    index = builder.select(nonempty, builder.sub(n, _ONE), _ZERO)
    value = view.load(index)
    zero = context.get_constant_null(st.dtype)
    result = builder.select(nonempty, value, zero)
    if remove:
        view.set_count(index)
    view.raise_flag(builder.not_(nonempty))
    return result


@lower_builtin(intrinsics.pop, AdStackType)
def cuda_pop(context, builder, sig, args):
    return _read_top(context, builder, sig, args, remove=True)


@lower_builtin(intrinsics.top, AdStackType)
def cuda_top(context, builder, sig, args):
    return _read_top(context, builder, sig, args, remove=False)


@lower_builtin(intrinsics.size, AdStackType)
def cuda_size(context, builder, sig, args):
    n = _View(context, builder, sig.args[0], args[0]).count()
    return context.cast(builder, n, types.uint32, sig.return_type)


@lower_builtin(intrinsics.clear, AdStackType)
def cuda_clear(context, builder, sig, args):
    view = _View(context, builder, sig.args[0], args[0])
    view.set_count(ir.Constant(view.count().type, 0))
    return context.get_dummy_value()


@lower_builtin(intrinsics.reserve, AdStackType, types.Integer)
def cuda_reserve(context, builder, sig, args):
    # A per-thread stack has the room it has: a push past it raises the flag.
    return context.get_dummy_value()


@lower_builtin(intrinsics.overflowed, AdStackType)
def cuda_overflowed(context, builder, sig, args):
    view = _View(context, builder, sig.args[0], args[0])
    return builder.icmp_unsigned("!=", builder.load(view.flag_ptr), _ZERO)
