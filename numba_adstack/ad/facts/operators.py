"""How Python operators are written in source."""
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
