"""What calls do to arrays: constructors make fresh arrays, other calls write into the
arrays they are given. (The adjoint rules of array primitives are in array_rules.py.)"""
import numpy as np

# Array constructors: the result is a fresh array whose contents carry no gradient; the
# rewrite gives it an adjoint array of the same shape.
ARRAY_CONSTRUCTORS = {np.zeros, np.empty, np.ones, np.empty_like, np.zeros_like,
                      np.ones_like, np.full, np.full_like}

# Constructors that fill the new array with a value (by argument position): the value's
# adjoint is the sum of the array's adjoint.
FILL_ARGUMENT = {np.full: 1, np.full_like: 1}

# Calls that write into an array they are given (methods by name, functions by object):
# refused when the gradient reads that array, since the rewrite cannot see what they write.
MUTATING_METHODS = {"fill", "sort", "put", "itemset", "resize", "partition", "setfield"}
MUTATING_FUNCTIONS = {np.fill_diagonal, np.random.shuffle, np.put, np.place, np.putmask,
                      np.copyto}


