# The helper fib's embedded interpreter runs for the syntax and structure checks of `fib validate`
# and `fib normalize` (src/python/runtime.cpp calls analyze_reference, check_expression and
# analyze_structure). It parses with CPython's own compiler in AST-only mode, exactly what
# ast.parse() does, but through the built-in `_ast` module: importing `ast` (and with it enum,
# re, ...) would cost more than all the checks. It never imports torch.
#
# Embedded into fib at build time (cmake/FibEmbed.cmake) and run in a fresh namespace; it is
# also importable as a plain module, which is how tests/python/test_helper.py tests it.
import _ast

_ONLY_AST = _ast.PyCF_ONLY_AST
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)

def _syntax(e):
    if isinstance(e, SyntaxError):
        return ('syntax', str(e), e.msg or '', e.lineno or 0, e.offset or 0)
    if isinstance(e, (RecursionError, MemoryError)):
        # CPython's parser gives up on deep nesting with one of these (a MemoryError has no
        # message; which one depends on the Python version and the shape of the nesting).
        text = 'it is nested too deeply to parse'
    else:
        text = str(e) or type(e).__name__
    return ('syntax', text, text, 0, 0)

def analyze_reference(src):
    try:
        tree = compile(src, '<unknown>', 'exec', _ONLY_AST)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    run = None
    for node in tree.body:
        if isinstance(node, _ast.FunctionDef) and node.name == 'run':
            run = node
    if run is None:
        return ('norun',)
    a = run.args
    positional = list(a.posonlyargs) + list(a.args)
    required = len(positional) - len(a.defaults)
    kwonly_required = sum(1 for d in a.kw_defaults if d is None)
    return ('run', len(positional), required, a.vararg is not None, kwonly_required,
            run.lineno, [p.arg for p in positional])

def check_expression(src):
    try:
        compile(src, '<unknown>', 'eval', _ONLY_AST)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    return None

# --- structure analysis for `fib normalize` ---
_TUPLE_RETURNING = frozenset((
    'split', 'chunk', 'unbind', 'sort', 'topk', 'max', 'min', 'median', 'mode', 'kthvalue',
    'unique', 'tensor_split', 'var_mean', 'std_mean', 'frexp', 'slogdet', 'qr', 'svd', 'eig',
    'lu', 'aminmax', 'cummax', 'cummin', 'hsplit', 'vsplit', 'dsplit', 'meshgrid', 'broadcast_tensors'))

def _own_nodes(fn):
    # Nodes of a function body, not descending into nested functions, lambdas or classes.
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in _children(node):
            if not isinstance(child, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.Lambda, _ast.ClassDef)):
                stack.append(child)

def _children(node):
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _ast.AST):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _ast.AST):
                    yield item

def _value_arity(value, fn, defs, depth):
    if value is None:
        return 0
    if isinstance(value, _ast.Constant) and value.value is None:
        return 0
    if isinstance(value, (_ast.Tuple, _ast.List)):
        if any(isinstance(e, _ast.Starred) for e in value.elts):
            return -1
        return len(value.elts)
    if isinstance(value, _ast.Call):
        func = value.func
        if isinstance(func, _ast.Name):
            target = defs.get(func.id)
            if target is not None and depth < 8:
                return _function_arity(target, defs, depth + 1)
            return -1
        if isinstance(func, _ast.Attribute):
            return -1 if func.attr in _TUPLE_RETURNING else 1
        return -1
    if isinstance(value, _ast.Name):
        assigned = [n.value for n in _own_nodes(fn) if isinstance(n, _ast.Assign)
                    and any(isinstance(t, _ast.Name) and t.id == value.id for t in n.targets)]
        if not assigned:
            return 1
        arities = {_value_arity(v, fn, defs, depth + 1) if depth < 8 else -1 for v in assigned}
        return arities.pop() if len(arities) == 1 else -1
    if isinstance(value, (_ast.IfExp, _ast.Starred, _ast.Await, _ast.Yield, _ast.YieldFrom)):
        return -1
    return 1

def _function_arity(fn, defs, depth=0):
    arities = set()
    falls_through = True
    for node in _own_nodes(fn):
        if isinstance(node, _ast.Return):
            arities.add(_value_arity(node.value, fn, defs, depth))
        elif isinstance(node, (_ast.Yield, _ast.YieldFrom)):
            return -1
    if fn.body and isinstance(fn.body[-1], (_ast.Return, _ast.Raise)):
        falls_through = False
    if falls_through:
        arities.add(0)
    return arities.pop() if len(arities) == 1 else -1

def _parameters(fn):
    a = fn.args
    positional = list(a.posonlyargs) + list(a.args)
    first_default = len(positional) - len(a.defaults)
    params = []
    for i, p in enumerate(positional):
        params.append((p.arg, 0 if i < len(a.posonlyargs) else 1, i >= first_default))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append((p.arg, 2, d is not None))
    return params, a.vararg is not None, a.kwarg is not None

def _top_level_names(top):
    """(bound, referenced) names of the module's own table. symtable's get_symbols() looks every
    name up among all child tables (quadratic in the number of top-level defs), so the flags are
    read directly; on a Python whose symtable lacks them, the public API is used instead."""
    import _symtable
    try:
        flags = top._table.symbols
        children = {child.name for child in top._table.children}
    except AttributeError:
        symbols = top.get_symbols()
        return ({s.get_name() for s in symbols
                 if s.is_assigned() or s.is_imported() or s.is_namespace()},
                {s.get_name() for s in symbols if s.is_referenced()})
    bound = {name for name, f in flags.items()
             if f & (_symtable.DEF_LOCAL | _symtable.DEF_IMPORT) or name in children}
    referenced = {name for name, f in flags.items() if f & _symtable.USE}
    return bound, referenced

def _unresolved(src):
    import symtable, builtins
    top = symtable.symtable(src, '<unknown>', 'exec')
    bound, referenced = _top_level_names(top)
    known = bound | set(dir(builtins)) | {'__name__', '__file__', '__doc__', '__builtins__',
                                          '__spec__', '__loader__', '__package__'}
    missing = {name for name in referenced if name not in known}
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for s in table.get_symbols():
            if s.is_referenced() and s.is_global() and s.get_name() not in known:
                missing.add(s.get_name())
    return sorted(missing)

def analyze_structure(src):
    try:
        tree = compile(src, '<unknown>', 'exec', _ONLY_AST)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    defs = {}
    functions = []
    for node in tree.body:
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
            defs[node.name] = node
    for node in tree.body:
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef)):
            params, var_pos, var_kw = _parameters(node)
            functions.append((node.name, node.lineno, node.end_lineno or node.lineno,
                              isinstance(node, _ast.AsyncFunctionDef), params, var_pos, var_kw,
                              _function_arity(node, defs)))
    insert_line = 0
    body = tree.body
    i = 0
    if body and isinstance(body[0], _ast.Expr) and isinstance(body[0].value, _ast.Constant) \
            and isinstance(body[0].value.value, str):
        insert_line = body[0].end_lineno
        i = 1
    while i < len(body) and isinstance(body[i], _ast.ImportFrom) and body[i].module == '__future__':
        insert_line = body[i].end_lineno
        i += 1
    try:
        unresolved = _unresolved(src)
    except _PARSE_ERRORS as e:
        return _syntax(e)
    return ('ok', functions, insert_line, unresolved)
