"""The pieces of ``np.split``, ``np.array_split``, ``np.hsplit``, ``vsplit`` and ``dsplit``,
as functions of their own (capture rewrites ``np.split(ary, 3)[k]`` as
``split_item(ary, 3, k)``: ad/capture/numpy_items.py), and their adjoints.
"""
import numpy as np
from .helper_jit import helper_jit


# ---------------------------------------------------------------------- split items
@helper_jit(error_model="numpy")
def split_item(ary, sections, index, axis=0):
    """``np.split(ary, sections, axis)[index]``."""
    return np.split(ary, sections, axis)[index]


@helper_jit(error_model="numpy")
def array_split_item(ary, sections, index, axis=0):
    """``np.array_split(ary, sections, axis)[index]``."""
    return np.array_split(ary, sections, axis)[index]


@helper_jit(error_model="numpy")
def hsplit_item(ary, sections, index):
    """``np.hsplit(ary, sections)[index]``: along the columns (the elements of a 1-d
    ``ary``)."""
    return np.hsplit(ary, sections)[index]


@helper_jit(error_model="numpy")
def vsplit_item(ary, sections, index):
    """``np.vsplit(ary, sections)[index]``: along the rows."""
    return np.vsplit(ary, sections)[index]


@helper_jit(error_model="numpy")
def dsplit_item(ary, sections, index):
    """``np.dsplit(ary, sections)[index]``: along the third axis."""
    return np.dsplit(ary, sections)[index]


@helper_jit(error_model="numpy")
def split_item_vjp(g, ary, sections, index, axis, unequal):
    """``g`` in the slab along ``axis`` of ``ary`` that piece ``index`` holds, zeros
    elsewhere."""
    ax = axis + ary.ndim if axis < 0 else axis
    rows = np.arange(ary.shape[ax])
    pieces = np.array_split(rows, sections) if unequal else np.split(rows, sections)
    out = np.zeros(ary.shape)
    piece = pieces[index]
    if piece.size:
        np.moveaxis(out, ax, 0)[piece[0]:piece[0] + piece.size] += np.moveaxis(g, ax, 0)
    return out


@helper_jit(error_model="numpy")
def hsplit_item_vjp(g, ary, sections, index):
    return split_item_vjp(g, ary, sections, index, 1 if ary.ndim > 1 else 0, False)
