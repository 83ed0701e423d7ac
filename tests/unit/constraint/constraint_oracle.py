"""The Python side of ConstraintDifferential (constraint_differential_test.cpp).

Run by the test binary's embedded interpreter; it models what fib's constraint evaluator promises
and nothing more. Tensors are the small classes below (torch is never imported); ints are 64-bit
(an int result or literal outside int64 is not evaluable), a complex result is not evaluable, and
a str, tuple or list longer than 16384 is not evaluable. Those rules are applied by rewriting the
parsed expression so that every arithmetic operator and call goes through a check; the operators
themselves are Python's.
"""

import ast
import json
import math
import operator
import os
import warnings

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
SEQUENCE_LIMIT = 16384


class NotEvaluable(Exception):
    pass


class Tensor:
    def __init__(self, shape, values, integral):
        self._shape = tuple(shape)
        self._values = values
        self._integral = integral

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return len(self._shape)

    def dim(self):
        return len(self._shape)

    def numel(self):
        return math.prod(self._shape)

    def size(self, *dims):
        if len(dims) > 1:
            raise TypeError('size() takes at most one argument')
        if not dims:
            return self._shape
        if type(dims[0]) not in (int, bool):
            raise TypeError('the dimension must be an integer')
        return self._shape[dims[0]]

    def __len__(self):
        if not self._shape:
            raise TypeError('len() of a 0-d tensor')
        return self._shape[0]

    def __getitem__(self, index):
        if len(self._shape) != 1:
            raise TypeError('only 1-D tensors can be indexed')
        if type(index) is not int:
            raise TypeError('tensor indices must be int')
        length = self._shape[0]
        if not -length <= index < length:
            raise IndexError('index out of range')
        return Element(self, index % length)

    def __iter__(self):
        raise TypeError('iterating a tensor is not supported')

    def __contains__(self, item):
        raise TypeError("'in' on a tensor is not supported")

    def element(self, index):
        if self._values is None:
            raise LookupError('needs the data of the tensor')
        value = self._values[index]
        if not self._integral:
            return float(value)
        if not math.isfinite(value) or value != math.trunc(value) or not -2.0**63 <= value < 2.0**63:
            raise ValueError('element is not a 64-bit integer')
        return int(value)

    def item(self):
        if self.numel() != 1:
            raise ValueError('only one element can become a Python scalar')
        return self.element(0)

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError('the truth value of a tensor with many elements is ambiguous')
        return bool(self.element(0))

    def _refuse(self, other):
        raise TypeError('comparing a tensor elementwise is not supported')

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse
    __hash__ = object.__hash__


class Element:
    """A 0-d tensor: element `index` of a 1-D tensor; it behaves as its number."""

    def __init__(self, tensor, index):
        self._tensor = tensor
        self._index = index

    def value(self):
        return self._tensor.element(self._index)

    shape = property(lambda self: ())
    ndim = property(lambda self: 0)

    def dim(self):
        return 0

    def numel(self):
        return 1

    def size(self, *dims):
        return Tensor((), None, True).size(*dims)

    def item(self):
        return self.value()

    def __bool__(self):
        return bool(self.value())

    def __abs__(self):
        return abs(self.value())

    def __eq__(self, other):
        return self.value() == resolve(other)

    def __ne__(self, other):
        return self.value() != resolve(other)

    def __lt__(self, other):
        return self.value() < resolve(other)

    def __le__(self, other):
        return self.value() <= resolve(other)

    def __gt__(self, other):
        return self.value() > resolve(other)

    def __ge__(self, other):
        return self.value() >= resolve(other)

    __hash__ = object.__hash__


def resolve(value):
    return value.value() if isinstance(value, Element) else value


def checked(value):
    if type(value) is int and not INT64_MIN <= value <= INT64_MAX:
        raise NotEvaluable('integer overflow')
    if isinstance(value, complex):
        raise NotEvaluable('complex result')
    if isinstance(value, (str, tuple, list)) and len(value) > SEQUENCE_LIMIT:
        raise NotEvaluable('sequence too long')
    return value


BINARY = {
    'Add': operator.add, 'Sub': operator.sub, 'Mult': operator.mul, 'Div': operator.truediv,
    'FloorDiv': operator.floordiv, 'Mod': operator.mod, 'Pow': operator.pow,
}


def is_int(value):
    return type(value) in (int, bool)


def binary(name, a, b):
    a = resolve(a)
    b = resolve(b)
    # Refused before Python computes them, as the results could not fit in 64 bits anyway.
    if name == 'Pow' and is_int(a) and is_int(b) and b > 64 and abs(a) > 1:
        raise NotEvaluable('integer overflow')
    if name == 'Mult':
        for sequence, count in ((a, b), (b, a)):
            if isinstance(sequence, (str, tuple, list)) and is_int(count) and \
                    len(sequence) * count > SEQUENCE_LIMIT:
                raise NotEvaluable('sequence too long')
    return checked(BINARY[name](a, b))


def unary(name, a):
    a = resolve(a)
    return checked(-a if name == 'USub' else +a)


class Guard(ast.NodeTransformer):
    def visit_BinOp(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Name('binary', ast.Load()),
                        [ast.Constant(type(node.op).__name__), node.left, node.right], [])

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.USub, ast.UAdd)):
            return ast.Call(ast.Name('unary', ast.Load()),
                            [ast.Constant(type(node.op).__name__), node.operand], [])
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        return ast.Call(ast.Name('checked', ast.Load()), [node], [])

    def visit_Constant(self, node):
        if type(node.value) is int and not INT64_MIN <= node.value <= INT64_MAX:
            raise NotEvaluable('integer literal over 64 bits')
        return node


GLOBALS = {
    '__builtins__': {'min': min, 'max': max, 'abs': abs, 'len': len},
    'binary': binary, 'unary': unary, 'checked': checked,
}


def judge(expression, names):
    """(outcome, the int result or None, what happened)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            tree = Guard().visit(ast.parse(expression, mode='eval'))
            code = compile(ast.fix_missing_locations(tree), '<constraint>', 'eval')
        value = eval(code, dict(GLOBALS), dict(names))
        truth = bool(value)
    except Exception as error:
        return ('not evaluable', None, f'{type(error).__name__}: {error}')
    integer = value if type(value) is int else None
    return ('satisfied' if truth else 'violated', integer, repr(value)[:200])


def find_definitions(node, out):
    if isinstance(node, dict):
        constraints = node.get('constraints')
        if isinstance(constraints, list) and constraints:
            axes = []
            for name, axis in (node.get('axes') or {}).items():
                value = axis.get('value') if isinstance(axis, dict) else None
                axes.append((name, value if type(value) is int else None))
            inputs = []
            for name, spec in (node.get('inputs') or {}).items():
                if not isinstance(spec, dict):
                    continue
                shape = spec.get('shape')
                shape = None if shape is None else [str(dim) for dim in shape]
                inputs.append((name, shape, str(spec.get('dtype', '')), bool(spec.get('optional'))))
            out.append(([c for c in constraints if isinstance(c, str)], axes, inputs))
        for value in node.values():
            find_definitions(value, out)
    elif isinstance(node, list):
        for value in node:
            find_definitions(value, out)


def corpus_definitions(root):
    """(file, constraints, [(axis, const value or None)], [(input, shape, dtype, optional)])."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories.sort()
        for file in sorted(files):
            if not file.endswith('.json'):
                continue
            path = os.path.join(directory, file)
            try:
                with open(path, encoding='utf-8') as handle:
                    document = json.load(handle)
            except (OSError, ValueError):
                continue
            definitions = []
            find_definitions(document, definitions)
            for constraints, axes, inputs in definitions:
                found.append((os.path.relpath(path, root), constraints, axes, inputs))
    return found
