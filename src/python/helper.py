# The helper fib's embedded interpreter runs for the syntax and structure checks of `fib validate`
# and `fib normalize` (src/python/runtime.cpp calls analyze_reference, check_expression and
# analyze_structure). It parses with CPython's own compiler in AST-only mode, exactly what
# ast.parse() does, but through the built-in `_ast` module: importing `ast` (and with it enum,
# re, ...) would cost more than all the checks. analyze_reference and check_expression first try
# CPython's symbol-table pass, which runs the same parser for 40% less and answers
# for every ordinary reference (_fast_reference says why that answer is the same). It never
# imports torch.
#
# Embedded into fib at build time (cmake/FibEmbed.cmake) and run in a fresh namespace; it is
# also importable as a plain module, which is how tests/python/test_helper.py tests it.
import _ast
import _symtable
import gc as _gc
import sys as _sys

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

def _parse(src, mode):
    # The cyclic garbage collector is paused while CPython builds the tree: the tree holds no
    # cycles (reference counting frees it), and collections triggered by its thousands of young
    # nodes would only traverse them again and again.
    _gc.disable()
    try:
        return compile(src, '<unknown>', mode, _ONLY_AST)
    finally:
        _gc.enable()

def _symbol_table(src, mode):
    """CPython's symbol table of src (which parses src with the same parser as compile()), or
    None when it refuses src for any reason. Its recursion limit is lowered by
    _SYMTABLE_DEPTH_MARGIN for the call, so that whatever it accepts is at least that many levels
    shallower than the depth at which the AST-only compile gives up: both passes count one level
    per nested expression, and the symbol table accepts at most a level or two more than the AST
    conversion at the same limit (tests/python/test_helper.py measures it)."""
    limit = _sys.getrecursionlimit()
    _gc.disable()
    try:
        _sys.setrecursionlimit(limit - _SYMTABLE_DEPTH_MARGIN)
        return _symtable.symtable(src, '<unknown>', mode)
    except Exception:
        return None
    finally:
        _sys.setrecursionlimit(limit)
        _gc.enable()

_SYMTABLE_DEPTH_MARGIN = 20
_BLANK = ' \t\f'
_BRACKETS = {'(': ')', '[': ']', '{': '}'}
_SPECIAL = '()[]{}\'"#\\'

def _skip_blank(text, i):
    n = len(text)
    while i < n and text[i] in _BLANK:
        i += 1
    return i

def _closing_paren(text, i):
    """The index of the ')' closing the '(' just before text[i], skipping strings, comments and
    nested brackets; -1 when the text ends first or looks like anything this scan does not model
    (the caller then takes the exact path)."""
    n = len(text)
    stack = [')']
    while i < n:
        c = text[i]
        if c in _BRACKETS:
            stack.append(_BRACKETS[c])
        elif c in ')]}':
            if c != stack.pop():
                return -1
            if not stack:
                return i
        elif c == '#':
            i = text.find('\n', i)
            if i < 0:
                return -1
        elif c == '"' or c == "'":
            quote = text[i:i + 3] if text.startswith(c * 3, i) else c
            i += len(quote)
            while True:
                if i >= n:
                    return -1
                if text[i] == '\\':
                    i += 2
                    continue
                if text.startswith(quote, i):
                    i += len(quote) - 1
                    break
                if len(quote) == 1 and text[i] == '\n':
                    return -1
                i += 1
        elif c == '\\':
            return -1
        i += 1
    return -1

def _run_parameters(src, lineno):
    """The parsed parameters of the `def run(...)` that starts line lineno at column 0, or None
    when that line does not start so (a decorator's line, an indented or `async` def, a
    backslash continuation) or its parameter list cannot be cut out with certainty."""
    if '\r' in src:
        # CPython counts a line at each \r\n, \r or \n (and no other character).
        src = src.replace('\r\n', '\n').replace('\r', '\n')
    parts = src.split('\n', lineno - 1)
    if len(parts) < lineno:
        return None
    tail = parts[-1]
    if not tail.startswith('def'):
        return None
    i = _skip_blank(tail, 3)
    if i == 3 or not tail.startswith('run', i):
        return None
    i = _skip_blank(tail, i + 3)
    if not tail.startswith('(', i):
        return None
    close = tail.find(')', i + 1)
    if close < 0:
        return None
    params = tail[i + 1:close]
    for c in _SPECIAL:
        if c in params:
            close = _closing_paren(tail, i + 1)
            if close < 0:
                return None
            params = tail[i + 1:close]
            break
    try:
        tree = compile('def run(' + params + '): pass', '<unknown>', 'exec', _ONLY_AST)
    except Exception:
        return None
    body = tree.body
    if len(body) != 1 or not isinstance(body[0], _ast.FunctionDef):
        return None
    return body[0].args

def _run_signature(run_args, lineno):
    a = run_args
    positional = list(a.posonlyargs) + list(a.args)
    required = len(positional) - len(a.defaults)
    kwonly_required = sum(1 for d in a.kw_defaults if d is None)
    return ('run', len(positional), required, a.vararg is not None, kwonly_required, lineno,
            [p.arg for p in positional])

def _fast_reference(src):
    """analyze_reference's answer from the symbol table, which costs about half of building the
    Python AST of a whole module, or None when it cannot be had with certainty that way.

    Certain because: the symbol table pass parses with the same parser, so src parses; it is
    shallower than the AST conversion's limit (_symbol_table), so the AST-only compile would have
    succeeded too; every function statement is a child table in source order, so no function
    child named `run` means no top-level `def run`; a child `run` whose `def` starts its line at
    column 0 is a top-level statement (compound bodies are indented), so the last such child is
    the last top-level `def run` when it is the last `run` child of all. Its parameters are
    compiled on their own and must name exactly the child's first variables, in order."""
    table = _symbol_table(src, 'exec')
    if table is None:
        return None
    last = None
    for child in table.children:
        if child.name == 'run' and child.type == _symtable.TYPE_FUNCTION:
            last = child
    if last is None:
        return ('norun',)
    run_args = _run_parameters(src, last.lineno)
    if run_args is None:
        return None
    a = run_args
    names = [p.arg for p in a.posonlyargs] + [p.arg for p in a.args]
    names += [p.arg for p in a.kwonlyargs]
    if a.vararg is not None:
        names.append(a.vararg.arg)
    if a.kwarg is not None:
        names.append(a.kwarg.arg)
    if last.varnames[:len(names)] != names:
        return None
    return _run_signature(run_args, last.lineno)

def analyze_reference(src):
    fast = _fast_reference(src)
    if fast is not None:
        return fast
    # The AST path. _parse is called from this frame as it always was: the depth at which CPython
    # gives up on deep nesting depends on how deep the Python stack is when it starts.
    try:
        tree = _parse(src, 'exec')
    except _PARSE_ERRORS as e:
        return _syntax(e)
    run = None
    for node in tree.body:
        if isinstance(node, _ast.FunctionDef) and node.name == 'run':
            run = node
    if run is None:
        return ('norun',)
    return _run_signature(run.args, run.lineno)

def check_expression(src):
    # Valid when the symbol table pass accepts it (see _symbol_table); the messages of an
    # invalid one come from the AST-only compile, exactly as ast.parse gives them.
    if _symbol_table(src, 'eval') is not None:
        return None
    try:
        _parse(src, 'eval')
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

# --- helpers from FlashInfer's source, for `fib normalize` (rule N22) ---
# resolve_helpers looks the names a reference reads but never defines up in the trace template
# modules of a FlashInfer package (flashinfer/trace/templates/*.py), and inlines the top-level
# statements that bind them, with what those read in turn (their module's imports; definitions
# imported from inside the package, followed to their own module), all found with the parser.
# The package is read as text, never imported.
_PACKAGE = 'flashinfer'
_MODULE_BYTES_LIMIT = 8 << 20  # a larger module is not read
_TEMPLATE_MODULES_LIMIT = 1024  # template modules looked at
_RESOLVE_DEPTH_LIMIT = 32  # chained imports followed
_KNOWN_GLOBALS = frozenset(('__name__', '__file__', '__doc__', '__builtins__', '__spec__',
                            '__loader__', '__package__'))
_CONDITIONAL = {'If': 'if', 'Try': 'try', 'With': 'with', 'For': 'for', 'While': 'while',
                'Match': 'match', 'TryStar': 'try', 'AsyncWith': 'with', 'AsyncFor': 'for'}
_module_cache = {}  # absolute path -> ((mtime_ns, size), _Module)
_installed_cache = []  # [root or None], once per process


def _split_lines(text):
    """Lines with their ends, split where CPython's line numbers count one (\\r\\n, \\r, \\n)."""
    lines, start, i, n = [], 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == '\n' or c == '\r':
            if c == '\r' and i + 1 < n and text[i + 1] == '\n':
                i += 1
            lines.append(text[start:i + 1])
            start = i + 1
        i += 1
    if start < n:
        lines.append(text[start:])
    return lines


def _target_names(target, out):
    if isinstance(target, _ast.Name):
        out.append(target.id)
    elif isinstance(target, (_ast.Tuple, _ast.List)):
        for element in target.elts:
            _target_names(element, out)
    elif isinstance(target, _ast.Starred):
        _target_names(target.value, out)


def _bound_by(node):
    """Names a top-level simple statement or definition binds; None for other statements."""
    if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)):
        return [node.name]
    names = []
    if isinstance(node, _ast.Assign):
        for target in node.targets:
            _target_names(target, names)
        return names
    if isinstance(node, (_ast.AnnAssign, _ast.AugAssign)):
        if isinstance(node.target, _ast.Name) and (
                isinstance(node, _ast.AugAssign) or node.value is not None):
            names.append(node.target.id)
        return names
    return None


def _alias_bound(node, alias):
    if isinstance(node, _ast.Import):
        return alias.asname or alias.name.partition('.')[0]
    return alias.asname or alias.name


class _Module:
    """One module of the package: its top-level statements and what binds each name."""

    def __init__(self, path, rel, dotted, is_package, text):
        self.path, self.rel, self.dotted = path, rel, dotted
        self.package = dotted if is_package else dotted.rpartition('.')[0]
        self.error = None
        self.lines = []
        self.body = []
        self.bindings = {}  # name -> [statement index, ...] (definitions and imports)
        self.conditional = {}  # name -> 'if' / 'try' / ...: bound only inside such a statement
        self.defined = set()  # names bound by the module's own statements (not imports)
        try:
            tree = compile(text, rel, 'exec', _ONLY_AST)
        except _PARSE_ERRORS as e:
            self.error = 'it does not parse ({})'.format(_syntax(e)[1])
            return
        self.lines = _split_lines(text)
        self.body = tree.body
        for index, node in enumerate(self.body):
            if isinstance(node, (_ast.Import, _ast.ImportFrom)):
                names = [_alias_bound(node, a) for a in node.names if a.name != '*']
            else:
                names = _bound_by(node)
            if names is None:
                kind = _CONDITIONAL.get(type(node).__name__)
                if kind is not None:
                    for inner in _ast_walk(node):
                        bound = _bound_by(inner) if not isinstance(
                            inner, (_ast.Import, _ast.ImportFrom)) else [
                                _alias_bound(inner, a) for a in inner.names]
                        for name in bound or ():
                            self.conditional.setdefault(name, kind)
                continue
            for name in names:
                self.bindings.setdefault(name, []).append(index)
                if not isinstance(node, (_ast.Import, _ast.ImportFrom)):
                    self.defined.add(name)

    def segment(self, index):
        """The source text of top-level statement `index` (decorators included)."""
        node = self.body[index]
        first = node.lineno
        if getattr(node, 'decorator_list', None):
            first = min(first, min(d.lineno for d in node.decorator_list))
        if isinstance(node, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef)):
            return ''.join(self.lines[first - 1:node.end_lineno]).rstrip() + '\n'
        # A simple statement may share its lines with others (`a = 1; b = 2`): cut by column
        # (CPython's columns count UTF-8 bytes).
        data = ''.join(self.lines[first - 1:node.end_lineno]).encode('utf-8')
        last_line_start = len(''.join(self.lines[first - 1:node.end_lineno - 1]).encode('utf-8'))
        text = data[node.col_offset:last_line_start + node.end_col_offset].decode('utf-8')
        return text.rstrip() + '\n'


def _ast_walk(node):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(_children(current))


def _read_module(path, rel, dotted, is_package):
    import os
    try:
        info = os.stat(path)
    except OSError as e:
        return None, 'it cannot be read ({})'.format(e.strerror or e)
    stamp = (info.st_mtime_ns, info.st_size)
    cached = _module_cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1], None
    if info.st_size > _MODULE_BYTES_LIMIT:
        return None, 'it is larger than {} MiB'.format(_MODULE_BYTES_LIMIT >> 20)
    try:
        with open(path, 'rb') as f:
            text = f.read(_MODULE_BYTES_LIMIT + 1).decode('utf-8')
    except (OSError, UnicodeDecodeError) as e:
        return None, 'it cannot be read ({})'.format(e)
    module = _Module(path, rel, dotted, is_package, text)
    _module_cache[path] = (stamp, module)
    return module, None


def _installed_flashinfer():
    """The directory holding the installed `flashinfer` package, found on the interpreter's import
    path (and its site-packages, which fib's interpreter does not add by itself) without importing
    it; None when there is none."""
    if _installed_cache:
        return _installed_cache[0]
    import sys
    import importlib.machinery
    path = list(sys.path)
    try:
        import site  # with site imports off, importing it runs nothing
        for entry in site.getsitepackages():
            if entry not in path:
                path.append(entry)
    except Exception:
        pass
    root = None
    try:
        spec = importlib.machinery.PathFinder.find_spec(_PACKAGE, path)
        if spec is not None and spec.submodule_search_locations:
            import os
            root = os.path.dirname(list(spec.submodule_search_locations)[0])
    except (ImportError, OSError, ValueError):
        root = None
    _installed_cache.append(root)
    return root


def _global_reads(segment, rel):
    """Names the statement reads from its module's namespace (at any depth), minus those it binds
    itself."""
    import symtable
    top = symtable.symtable(segment, rel, 'exec')
    bound, referenced = _top_level_names(top)
    reads = set(referenced)
    stack = list(top.get_children())
    while stack:
        table = stack.pop()
        stack.extend(table.get_children())
        for s in table.get_symbols():
            if s.is_referenced() and s.is_global():
                reads.add(s.get_name())
    return sorted(reads - bound)


class _Resolver:
    """Resolves names to the statements that bind them; builds the graph of what each needs."""

    def __init__(self, root, reference_bound):
        import builtins
        self.root = root
        self.reference_bound = reference_bound
        self.builtins = set(dir(builtins)) | _KNOWN_GLOBALS
        self.modules = {}  # dotted -> (_Module or None, why not)
        self.memo = {}  # (dotted, name) -> ('nodes', [keys]) or ('miss', reason)
        self.nodes = {}  # key -> node dict
        self.active = set()

    def module(self, dotted):
        if dotted in self.modules:
            return self.modules[dotted]
        import os
        parts = dotted.split('.')
        base = os.path.join(self.root, *parts)
        found = (None, '{} is not Python source in the package'.format(dotted))
        for path, is_package in ((base + '.py', False), (os.path.join(base, '__init__.py'), True)):
            if os.path.isfile(path):
                rel = '/'.join(parts) + ('/__init__.py' if is_package else '.py')
                module, error = _read_module(path, rel, dotted, is_package)
                found = (module, None) if module is not None else (
                    None, '{} cannot be used: {}'.format(rel, error))
                if module is not None and module.error:
                    found = (None, '{} cannot be used: {}'.format(rel, module.error))
                break
        self.modules[dotted] = found
        return found

    def resolve(self, module, name, depth=0):
        """('nodes', [node keys]) binding `name` in `module`'s namespace, or ('miss', reason)."""
        memo_key = (module.dotted, name)
        if memo_key in self.memo:
            return self.memo[memo_key]
        if memo_key in self.active or depth > _RESOLVE_DEPTH_LIMIT:
            return ('miss', 'its imports go round in a cycle')
        self.active.add(memo_key)
        result = self._resolve(module, name, depth)
        self.active.discard(memo_key)
        self.memo[memo_key] = result
        return result

    def _resolve(self, module, name, depth):
        indices = module.bindings.get(name)
        if not indices:
            where = module.conditional.get(name)
            if where is not None:
                return ('miss', 'bound only inside a top-level `{}` in {}'.format(where, module.rel))
            return ('miss', 'not defined in {}'.format(module.rel))
        imports = [i for i in indices if isinstance(module.body[i], (_ast.Import, _ast.ImportFrom))]
        if imports and len(indices) > 1:
            return ('miss', 'bound more than once in {}, by import and otherwise'.format(module.rel))
        if not imports:
            return ('nodes', [self.statement(module, i) for i in indices])
        node = module.body[imports[0]]
        alias = next(a for a in node.names if _alias_bound(node, a) == name)
        statement = '`{}` in {}'.format(_import_text(node, alias), module.rel)
        if isinstance(node, _ast.Import):
            if alias.name == _PACKAGE or alias.name.startswith(_PACKAGE + '.'):
                return ('miss', 'needs the module {} itself ({})'.format(alias.name, statement))
            return ('nodes', [self.import_line(_import_text(node, alias), name)])
        source = _absolute_module(module, node)
        if source is None:
            return ('miss', 'imported by {}, which goes above the package'.format(statement))
        if source != _PACKAGE and not source.startswith(_PACKAGE + '.'):
            return ('nodes', [self.import_line(_import_text(node, alias), name)])
        target, why = self.module(source)
        if target is None:
            return ('miss', 'imported by {}, but {}'.format(statement, why))
        if alias.name not in target.bindings:
            submodule, _ = self.module(source + '.' + alias.name)
            if submodule is not None:
                return ('miss', 'needs the module {}.{} itself ({})'.format(
                    source, alias.name, statement))
        found = self.resolve(target, alias.name, depth + 1)
        if found[0] == 'miss' or alias.name == name:
            return found
        key = ('alias', module.rel, imports[0], name)
        if key not in self.nodes:
            self.nodes[key] = {'module': module, 'index': imports[0], 'binds': [name],
                               'text': '{} = {}\n'.format(name, alias.name), 'deps': True,
                               'resolved': [(alias.name, found)]}
        return ('nodes', [key])

    def statement(self, module, index):
        key = ('stmt', module.rel, index)
        if key not in self.nodes:
            self.nodes[key] = {'module': module, 'index': index, 'text': module.segment(index),
                               'binds': _bound_by(module.body[index]), 'deps': None}
        return key

    def import_line(self, text, name):
        key = ('import', text)
        if key not in self.nodes:
            self.nodes[key] = {'module': None, 'index': 0, 'text': text + '\n', 'binds': [name],
                               'deps': [], 'resolved': []}
        return key

    def dependencies(self, key):
        """[(name, resolution)] of what node `key` reads; computed once."""
        node = self.nodes[key]
        if node['deps'] is None:
            resolved = []
            module = node['module']
            try:
                reads = _global_reads(node['text'], module.rel)
            except _PARSE_ERRORS as e:
                reads = []
                resolved.append(('', ('miss', 'its text does not parse alone ({})'.format(_syntax(e)[1]))))
            for name in reads:
                if name in self.reference_bound:
                    continue
                if name not in module.bindings and name not in module.conditional \
                        and name in self.builtins:
                    continue
                resolved.append((name, self.resolve(module, name)))
            node['resolved'] = resolved
            node['deps'] = True
        return node['resolved']


def _import_text(node, alias):
    if isinstance(node, _ast.Import):
        head = 'import {}'.format(alias.name)
    else:
        head = 'from {}{} import {}'.format('.' * node.level, node.module or '', alias.name)
    return head + (' as {}'.format(alias.asname) if alias.asname else '')


def _absolute_module(module, node):
    if node.level == 0:
        return node.module
    parts = module.package.split('.')
    if node.level - 1 >= len(parts):
        return None
    base = parts[:len(parts) - (node.level - 1)]
    return '.'.join(base + ([node.module] if node.module else []))


def _template_modules(resolver, reference_defs):
    """The trace template modules, those that define most of the reference's own top-level names
    (the module it was dumped from) first, then by path."""
    import os
    directory = os.path.join(resolver.root, _PACKAGE, 'trace', 'templates')
    try:
        files = sorted(f for f in os.listdir(directory) if f.endswith('.py'))
    except OSError:
        files = []
    modules = []
    for f in files[:_TEMPLATE_MODULES_LIMIT]:
        module, _ = resolver.module('{}.trace.templates.{}'.format(_PACKAGE, f[:-3]))
        if module is not None and f != '__init__.py':
            modules.append(module)
    ranked = sorted(modules, key=lambda m: (-sum(1 for n in reference_defs if n in m.defined),
                                            m.rel))
    return ranked


def _find_root(resolver, modules, name):
    for module in modules:
        if name in module.bindings:
            return resolver.resolve(module, name)
    for module in modules:
        where = module.conditional.get(name)
        if where is not None:
            return ('miss', 'bound only inside a top-level `{}` in {}'.format(where, module.rel))
    return ('miss', 'not defined in any {}/trace/templates module'.format(_PACKAGE))


def _closure(resolver, roots):
    """Every node the good roots need; the reason each bad root cannot be inlined."""
    order, seen, parents, bad = [], set(), {}, {}
    queue = []
    for name, found in roots:
        if found[0] == 'nodes':
            queue.extend(found[1])
    for key in queue:  # grows while it is walked
        if key in seen:
            continue
        seen.add(key)
        order.append(key)
        for dep_name, found in resolver.dependencies(key):
            if found[0] == 'miss':
                bad.setdefault(key, (dep_name, found[1]))
                continue
            for dep in found[1]:
                parents.setdefault(dep, []).append(key)
                queue.append(dep)
    # What binds one name from two different places cannot share one namespace.
    sources = {}
    for key in order:
        node = resolver.nodes[key]
        source = key if key[0] == 'import' else node['module'].rel
        for name in node['binds']:
            sources.setdefault(name, []).append((source, key))
    for name, entries in sorted(sources.items()):
        if len({s for s, _ in entries}) > 1:
            places = sorted({s if isinstance(s, str) else s[1] for s, _ in entries})
            for _, key in entries:
                bad.setdefault(key, (name, 'bound differently in {}'.format(
                    ' and '.join(places))))
        for _, key in entries:
            if name in resolver.reference_bound and key[0] != 'import':
                bad.setdefault(key, (name, 'inlining it would rebind {}, which the reference '
                                           'defines'.format(name)))
    # Badness flows up to everything that needs a bad node.
    flowing = [k for k in order if k in bad]
    for key in flowing:  # grows while it is walked
        for parent in parents.get(key, ()):
            if parent not in bad:
                bad[parent] = bad[key]
                flowing.append(parent)
    return order, bad


def _insert_line(tree):
    """After the docstring and the imports the reference starts with."""
    line, body = 0, tree.body
    i = 0
    if body and isinstance(body[0], _ast.Expr) and isinstance(body[0].value, _ast.Constant) \
            and isinstance(body[0].value.value, str):
        line, i = body[0].end_lineno, 1
    while i < len(body) and isinstance(body[i], (_ast.Import, _ast.ImportFrom)):
        line, i = body[i].end_lineno, i + 1
    return line


def _module_order(resolver, keys):
    """Modules in the order their definitions go: a module after those it imports from."""
    edges = {}
    for key in keys:
        node = resolver.nodes[key]
        if node['module'] is None:
            continue
        for _, found in resolver.dependencies(key):
            for target in found[1] if found[0] == 'nodes' else ():
                module = resolver.nodes[target]['module']
                if module is not None and module is not node['module']:
                    edges.setdefault(node['module'].rel, set()).add(module.rel)
    order, done = [], set()
    names = sorted({resolver.nodes[k]['module'].rel for k in keys if resolver.nodes[k]['module']})
    for start in names:
        stack = [(start, iter(sorted(edges.get(start, ()))))]
        if start in done:
            continue
        done.add(start)
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                order.append(current)
                stack.pop()
            elif child not in done:
                done.add(child)
                stack.append((child, iter(sorted(edges.get(child, ())))))
    return {rel: i for i, rel in enumerate(order)}


def resolve_helpers(src, names, root):
    """Inlines what `names` (read by the reference `src`, bound nowhere in it) need from the trace
    templates of the FlashInfer package below `root` ('' finds the installed one). Returns
    (package directory or '', new reference or None, inserted line count,
     [(file, [names])], [import lines], [(name, reason)])."""
    import os
    try:
        tree = compile(src, '<unknown>', 'exec', _ONLY_AST)
        import symtable
        reference_bound, _ = _top_level_names(symtable.symtable(src, '<unknown>', 'exec'))
    except _PARSE_ERRORS as e:
        return ('', None, 0, [], [], [(n, 'the reference does not parse ({})'.format(
            _syntax(e)[1])) for n in names])
    if not root:
        root = _installed_flashinfer()
        if root is None:
            why = 'no {} package was found on the import path'.format(_PACKAGE)
            return ('', None, 0, [], [], [(n, why) for n in names])
    package = os.path.join(root, _PACKAGE)
    if not os.path.isdir(os.path.join(package, 'trace', 'templates')):
        why = 'the {} package at {} has no trace/templates'.format(_PACKAGE, package)
        return ('', None, 0, [], [], [(n, why) for n in names])
    resolver = _Resolver(root, reference_bound)
    reference_defs = [n.name for n in tree.body
                      if isinstance(n, (_ast.FunctionDef, _ast.AsyncFunctionDef, _ast.ClassDef))]
    modules = _template_modules(resolver, reference_defs)
    roots = [(name, _find_root(resolver, modules, name)) for name in names]
    order, bad = _closure(resolver, roots)
    missing, good = [], []
    for name, found in roots:
        if found[0] == 'miss':
            missing.append((name, found[1]))
            continue
        # Badness has flowed up to every root node whose closure holds a bad node.
        culprit = next((bad[k] for k in found[1] if k in bad), None)
        if culprit is None:
            good.extend(found[1])
        elif culprit[0] in ('', name):
            missing.append((name, culprit[1]))
        else:
            missing.append((name, 'needs {}: {}'.format(culprit[0], culprit[1])))
    if not good:
        return (package, None, 0, [], [], missing)
    keys = _reachable(resolver, good)
    rank = _module_order(resolver, keys)
    imports = sorted((k for k in keys if k[0] == 'import'), key=lambda k: k[1])
    imports = [k for k in imports if resolver.nodes[k]['binds'][0] not in reference_bound]
    definitions = sorted((k for k in keys if k[0] != 'import'),
                         key=lambda k: (rank[resolver.nodes[k]['module'].rel],
                                        resolver.nodes[k]['index'], k[0] == 'alias'))
    files = {}
    for key in definitions:
        node = resolver.nodes[key]
        files.setdefault(node['module'].rel, []).extend(node['binds'])
    file_list = sorted(files.items(), key=lambda item: rank[item[0]])
    block = ['# Inlined by fib normalize from FlashInfer\'s source: {}.\n'.format(
        ', '.join(rel for rel, _ in file_list))]
    block.extend(resolver.nodes[k]['text'] for k in imports)
    for key in definitions:
        block.append('\n\n' + resolver.nodes[key]['text'])
    lines = _split_lines(src)
    at = _insert_line(tree)
    # Two blank lines between the helpers and the reference's own code, counting its own.
    blank = 0
    while at + blank < len(lines) and not lines[at + blank].strip() and blank < 2:
        blank += 1
    text = ''.join(block) + '\n' * (2 - blank)
    head = ''.join(lines[:at])
    if head and not head.endswith(('\n', '\r')):
        head += '\n'
    separator = '\n' if head else ''
    new_src = head + separator + text + ''.join(lines[at:])
    inserted = len(_split_lines(separator + text))
    return (package, new_src, inserted, file_list,
            [resolver.nodes[k]['text'].rstrip('\n') for k in imports], missing)


def _reachable(resolver, keys):
    seen, order, queue = set(), [], list(keys)
    while queue:
        key = queue.pop()
        if key in seen:
            continue
        seen.add(key)
        order.append(key)
        for _, found in resolver.dependencies(key):
            if found[0] == 'nodes':
                queue.extend(found[1])
    return sorted(order)
