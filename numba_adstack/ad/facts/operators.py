"""How Python operators are written in source."""
import ast
import operator

OPS = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
    operator.floordiv: "//", operator.mod: "%", operator.pow: "**", operator.lshift: "<<",
    operator.rshift: ">>", operator.and_: "&", operator.or_: "|", operator.xor: "^",
    operator.matmul: "@", operator.eq: "==", operator.ne: "!=", operator.lt: "<",
    operator.le: "<=", operator.gt: ">", operator.ge: ">=", operator.is_: "is",
    operator.is_not: "is not",
}
UNARY = {operator.neg: "-", operator.pos: "+", operator.not_: "not ", operator.invert: "~"}

#: The syntax tree node of each operator: a binary operator, a comparison or a unary one.
_A = ast
NODES = {
    operator.add: _A.Add, operator.sub: _A.Sub, operator.mul: _A.Mult,
    operator.truediv: _A.Div, operator.floordiv: _A.FloorDiv, operator.mod: _A.Mod,
    operator.pow: _A.Pow, operator.lshift: _A.LShift, operator.rshift: _A.RShift,
    operator.and_: _A.BitAnd, operator.or_: _A.BitOr, operator.xor: _A.BitXor,
    operator.matmul: _A.MatMult, operator.eq: _A.Eq, operator.ne: _A.NotEq,
    operator.lt: _A.Lt, operator.le: _A.LtE, operator.gt: _A.Gt, operator.ge: _A.GtE,
    operator.is_: _A.Is, operator.is_not: _A.IsNot,
}
UNARY_NODES = {operator.neg: _A.USub, operator.pos: _A.UAdd, operator.not_: _A.Not,
               operator.invert: _A.Invert}
