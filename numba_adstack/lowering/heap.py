"""Heap storage of CPU adstacks: a growable NRT buffer that every exit of the function
creating it frees, error exits included.

The value of a heap stack is ``{i8* header, meminfo*}``. ``header`` points to an
entry-block alloca ``{i64 count, i64 capacity, T* data}``, which LLVM keeps in registers;
the meminfo owns the buffer, so Numba's reference counting frees it on a normal return.

An error return (out of memory, an underflow, a frame overflow) skips that reference
counting, so the function frees its heap stacks itself on the way out: each creation site
has an entry-block *slot* holding the meminfo of its live stack, and every error exit
lowered by this module releases the stacks its slots hold. The buffer starts with a
32-byte prefix ``{slot, meminfo, hint}``; its destructor empties the slot (when the slot
still names this stack), so a stack already freed by Numba is never released twice.

Growth doubles the capacity, or more when ``reserve`` asks for it, with ``realloc`` (in
place for large buffers). A failed allocation leaves the old buffer to its meminfo and
raises ``MemoryError``. Each creation site keeps, in a global of its module, the largest
capacity its stacks grew to (up to ``HINT_LIMIT`` elements): the next call starts there,
so a function called again with the same sizes does not grow its stacks again.
"""
from llvmlite import ir
from numba.core import cgutils

PREFIX_BYTES = 32
#: Largest first capacity a creation site's hint gives (elements): past it, stacks grow.
HINT_LIMIT = 1 << 22
_I64 = ir.IntType(64)
_I32 = ir.IntType(32)
_PTR = cgutils.voidptr_t
_SLOTS = "_numba_adstack_heap_slots"        # slots of the llvm function, in lowering order
_EXIT = "_numba_adstack_error_exit"         # its shared error exit: (block, phi, switch)
_DTOR = "numba_adstack.heap_dtor"
_RELEASE = "numba_adstack.release_slot"
_GROW = "numba_adstack.grow"
_PREFIX_TY = ir.LiteralStructType([_PTR.as_pointer(), _PTR, _I64.as_pointer()])
_GROWN = ir.LiteralStructType([_PTR, _I64])


def header_type(context, fe_type):
    elt = context.get_data_type(fe_type.dtype)
    return ir.LiteralStructType([_I64, _I64, elt.as_pointer()])


def _entry_alloca(builder, ty, init=None):
    with builder.goto_entry_block():
        ptr = builder.alloca(ty)
        if init is not None:
            builder.store(init, ptr)
    ptr.align = 8
    return ptr


# ---------------------------------------------------------------- helper functions

def _dtor(module):
    """``void dtor(i8* base)``: empty the slot named in the prefix if it holds this stack."""
    fn = cgutils.get_or_insert_function(module, ir.FunctionType(ir.VoidType(), [_PTR]),
                                        _DTOR)
    if not fn.is_declaration:
        return fn
    fn.linkage = "linkonce_odr"
    b = ir.IRBuilder(fn.append_basic_block())
    prefix = b.bitcast(fn.args[0], _PREFIX_TY.as_pointer())
    slot = b.load(cgutils.gep_inbounds(b, prefix, 0, 0))
    mine = b.load(cgutils.gep_inbounds(b, prefix, 0, 1))
    with b.if_then(b.icmp_unsigned("==", b.load(slot), mine)):
        b.store(_PTR(None), slot)
    b.ret_void()
    return fn


def _release(module):
    """``void release(i8** slot)``: free the stack a slot holds, if any."""
    fn = cgutils.get_or_insert_function(
        module, ir.FunctionType(ir.VoidType(), [_PTR.as_pointer()]), _RELEASE)
    if not fn.is_declaration:
        return fn
    fn.linkage = "linkonce_odr"
    b = ir.IRBuilder(fn.append_basic_block())
    mi = b.load(fn.args[0])
    with b.if_then(cgutils.is_not_null(b, mi)):
        call_dtor = cgutils.get_or_insert_function(
            module, ir.FunctionType(ir.VoidType(), [_PTR]), "NRT_MemInfo_call_dtor")
        b.call(call_dtor, [mi])         # runs the dtor above, which empties the slot
    b.ret_void()
    return fn


# ---------------------------------------------------------------- error exits

def raise_error(context, builder, exc, msg):
    """Release this function's live heap stacks, then raise ``exc(msg)``. Inside a
    nopython ``try`` block the function goes on running: nothing is released.

    Every error site of the function branches to one shared block that releases the
    stacks, then switches to the raise of the site's message, one block per message: the
    code grows with the messages plus the stacks, not with the sites or their product."""
    if getattr(builder, "_in_try_block", False):
        context.call_conv.return_user_exc(builder, exc, (msg,))
        return
    fn = builder.function
    state = getattr(fn, _EXIT, None)
    known = state[3].get((exc, msg)) if state is not None else None
    if known is None:
        raise_bb = fn.append_basic_block("adstack_raise")
        if state is None:
            exit_bb = fn.append_basic_block("adstack_error_exit")
            b = ir.IRBuilder(exit_bb)
            site = b.phi(_I32)
            release = _release(builder.module)
            for slot in getattr(fn, _SLOTS, ()):
                b.call(release, [slot])
            state = (exit_bb, site, b.switch(site, raise_bb), {})
            setattr(fn, _EXIT, state)
        k = len(state[3])
        if k:
            state[2].add_case(_I32(k), raise_bb)
        state[3][(exc, msg)] = known = k
        here = builder.block
        builder.position_at_end(raise_bb)
        context.call_conv.return_user_exc(builder, exc, (msg,))
        builder.position_at_end(here)
    exit_bb, site = state[0], state[1]
    site.add_incoming(_I32(known), builder.block)
    builder.branch(exit_bb)


def _register(builder, slot):
    """A new creation site: the shared error exit, if already made, releases it too."""
    fn = builder.function
    if not hasattr(fn, _SLOTS):
        setattr(fn, _SLOTS, [])
    getattr(fn, _SLOTS).append(slot)
    state = getattr(fn, _EXIT, None)
    if state is not None:
        b = ir.IRBuilder(state[0])
        b.position_before(state[2])
        b.call(_release(builder.module), [slot])


# ---------------------------------------------------------------- creation and growth

def _hint(module):
    """A new global of ``module``: the largest capacity one creation site's stacks grew
    to, across calls."""
    name = module.get_unique_name("numba_adstack.capacity_hint")
    gv = ir.GlobalVariable(module, _I64, name)
    gv.linkage = "internal"
    gv.initializer = _I64(0)
    gv.align = 8
    return gv


def _bytes_for(builder, capacity, esize):
    """``PREFIX_BYTES + capacity * esize`` and whether it overflows (or is negative)."""
    esize = esize if isinstance(esize, ir.Value) else _I64(esize)
    total, ovf = cgutils.muladd_with_overflow(builder, capacity, esize, _I64(PREFIX_BYTES))
    bad = builder.or_(ovf, builder.icmp_signed("<", capacity, _I64(0)))
    return total, bad


def new_heap(context, builder, st, fname, oom_message):
    """Lower ``adstack(dtype, capacity, "heap")``: the stack value."""
    hdr_ty = header_type(context, st)
    elt_ty = hdr_ty.elements[2].pointee
    esize = context.get_abi_sizeof(elt_ty)
    hdr = _entry_alloca(builder, hdr_ty)
    slot = _entry_alloca(builder, _PTR, _PTR(None))
    _register(builder, slot)
    hint = _hint(builder.module)
    seen = builder.load_atomic(hint, "monotonic", 8)
    seen = builder.select(builder.icmp_signed("<=", seen, _I64(HINT_LIMIT)), seen, _I64(0))
    cap = builder.select(builder.icmp_signed(">", seen, _I64(st.capacity)), seen,
                         _I64(st.capacity))
    nbytes, _ = _bytes_for(builder, cap, esize)
    mi = context.nrt.meminfo_new_varsize_dtor_unchecked(
        builder, nbytes, builder.bitcast(_dtor(builder.module), _PTR))
    with cgutils.if_unlikely(builder, cgutils.is_null(builder, mi)):
        raise_error(context, builder, MemoryError,
                    oom_message(fname, st, PREFIX_BYTES + st.capacity * esize))
    base = context.nrt.meminfo_data(builder, mi)
    prefix = builder.bitcast(base, _PREFIX_TY.as_pointer())
    builder.store(slot, cgutils.gep_inbounds(builder, prefix, 0, 0))
    builder.store(mi, cgutils.gep_inbounds(builder, prefix, 0, 1))
    builder.store(hint, cgutils.gep_inbounds(builder, prefix, 0, 2))
    builder.store(mi, slot)
    data = builder.bitcast(builder.gep(base, [_I64(PREFIX_BYTES)], inbounds=True),
                           elt_ty.as_pointer())
    builder.store(_I64(0), cgutils.gep_inbounds(builder, hdr, 0, 0))
    builder.store(cap, cgutils.gep_inbounds(builder, hdr, 0, 1))
    builder.store(data, cgutils.gep_inbounds(builder, hdr, 0, 2))
    val = cgutils.create_struct_proxy(st)(context, builder)
    val.header = builder.bitcast(hdr, _PTR)
    val.meminfo = mi
    return val._getvalue()


def grow(view, need, fname, oom_message):
    """Make the capacity at least ``need`` (an i64 above the current capacity): double
    it, or take ``need`` when that is more. Emitted on the unlikely path, as a call of one
    helper per module (:func:`_grow_fn`): each push of a function is a few instructions."""
    b, ctx = view.builder, view.context
    cap_ptr = cgutils.gep_inbounds(b, view.hdr, 0, 1)
    grown = b.call(_grow_fn(ctx, b.module),
                   [view.meminfo, b.load(cap_ptr), need, _I64(view.esize)])
    base = b.extract_value(grown, 0)
    with cgutils.if_unlikely(b, cgutils.is_null(b, base)):
        raise_error(ctx, b, MemoryError, oom_message(fname, view.st, None))
    b.store(b.extract_value(grown, 1), cap_ptr)
    data = b.gep(base, [_I64(PREFIX_BYTES)], inbounds=True)
    b.store(b.bitcast(data, view.elt_ty.as_pointer()), cgutils.gep_inbounds(b, view.hdr, 0, 2))


def _grow_fn(context, module):
    """``{i8*, i64} grow(i8* meminfo, i64 capacity, i64 need, i64 esize)``: reallocate the
    buffer of a stack to twice its capacity, or to ``need`` when that is more; return the
    new buffer and capacity, or a null buffer when the size overflows or memory runs out
    (the old buffer then stays with its meminfo, so releasing the stack frees it). Not
    inlined: it runs on the rare path, and each push stays small."""
    fnty = ir.FunctionType(_GROWN, [_PTR, _I64, _I64, _I64])
    fn = cgutils.get_or_insert_function(module, fnty, _GROW)
    if not fn.is_declaration:
        return fn
    fn.linkage = "linkonce_odr"
    fn.attributes.add("noinline")
    fn.attributes.add("cold")
    meminfo, cap, need, esize = fn.args
    b = ir.IRBuilder(fn.append_basic_block())
    doubled = b.shl(cap, _I64(1))
    newcap = b.select(b.icmp_signed(">", need, doubled), need, doubled)
    nbytes, bad = _bytes_for(b, newcap, esize)
    with cgutils.if_unlikely(b, bad):
        b.ret(_GROWN(None))
    # realloc failing keeps the old buffer, but Numba's wrapper forgets it: put it back
    # in the meminfo so that releasing the stack frees it.
    mi_struct = b.bitcast(meminfo, _MEMINFO_TY.as_pointer())
    data_field = cgutils.gep_inbounds(b, mi_struct, 0, 3)
    old = b.load(data_field)
    base = context.nrt.meminfo_varsize_realloc_unchecked(b, meminfo, nbytes)
    with cgutils.if_unlikely(b, cgutils.is_null(b, base)):
        b.store(old, data_field)
        b.ret(_GROWN(None))
    # The next call of the function starts at this capacity (a hint: races are harmless).
    hint = b.load(cgutils.gep_inbounds(b, b.bitcast(base, _PREFIX_TY.as_pointer()), 0, 2))
    old_hint = b.load_atomic(hint, "monotonic", 8)
    b.store_atomic(b.select(b.icmp_signed(">", newcap, old_hint), newcap, old_hint), hint,
                   "monotonic", 8)
    b.ret(b.insert_value(b.insert_value(_GROWN(None), base, 0), newcap, 1))
    return fn


#: Numba's NRT_MemInfo: refct, dtor, dtor_info, data, size (numba/core/runtime/nrt.cpp).
_MEMINFO_TY = ir.LiteralStructType([_I64, _PTR, _PTR, _PTR, _I64])
