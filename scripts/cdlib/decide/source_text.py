"""Static text work of minify's source stage (no run, no torch): what a candidate lost that the
failure needs (names never bound, the failure's own strings, the program's random seed, calls that
always raise), the literal pass that shrinks counts and sizes first, and the clean-ups one query checks
(docstrings, bare constant statements)."""
import ast
import time
from concurrent.futures import ThreadPoolExecutor


def undefined_names(text):
    """Names a program loads but never binds anywhere (not builtins): a candidate that lost a
    definition or an import. Conservative: any binding anywhere counts, `import *` disables it."""
    import builtins
    tree = ast.parse(text)
    bound = set(dir(builtins)) | {"__file__", "__builtins__", "__spec__", "__loader__", "__package__",
                                  "__annotations__", "__class__", "__path__", "__cached__"}
    loads = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else bound).add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, ast.alias):
            if n.name == "*":
                return set()
            bound.add(n.asname or n.name.split(".")[0])
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            bound.update(n.names)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            bound.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            bound.add(n.rest)
    return loads - bound


def string_exprs_parts(text):
    """{source text of each string expression (a constant or an f-string): its constant pieces}."""
    out = {}
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.JoinedStr):
            own = {v.value for v in n.values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            own = {n.value}
        else:
            continue
        out.setdefault(ast.unparse(n), set()).update(own)
    return out


def nonsense(text):
    """What a reducer's candidate does that always raises (it replaced an expression by a constant):
    calling a number, an attribute a number or None does not have, iterating over one, range() without
    arguments. None when there is nothing of the kind."""
    def const(n):
        return isinstance(n, ast.Constant) and not isinstance(n.value, (str, bytes))
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Call):
            if const(n.func):
                return f"calls the constant {ast.unparse(n.func)}"
            if isinstance(n.func, ast.Name) and n.func.id == "range" and not n.args:
                return "range() without arguments"
        elif isinstance(n, ast.Attribute) and const(n.value) and not hasattr(n.value.value, n.attr):
            return f"{ast.unparse(n)}: no such attribute"
        elif isinstance(n, (ast.For, ast.comprehension)) and const(n.iter):
            return f"iterates over {ast.unparse(n.iter)}"
        elif isinstance(n, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) and const(c)
                                                for op, c in zip(n.ops, n.comparators)):
            return "`in` a number"
    return None


GLOBAL_SEEDS = {"torch.manual_seed", "random.seed", "np.random.seed", "numpy.random.seed", "set_seed",
                "transformers.set_seed", "seed_everything", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
                "torch.random.manual_seed"}


def global_seeds(text):
    """The calls of a program that seed a global random generator (torch.manual_seed(0), random.seed,
    np.random.seed, transformers' set_seed), as source text: a fresh interpreter seeds torch's default
    generator differently in every process (checked on torch 2.9, 2.14, 2.15)."""
    out = []
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Call):
            name = ast.unparse(n.func)
            if name in GLOBAL_SEEDS:
                out.append(ast.unparse(n))
    return out


def string_exprs(text):
    """The string expressions of a program (constants and f-strings), as source text."""
    return {ast.unparse(n) for n in ast.walk(ast.parse(text))
            if isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, str))}


def attr_names(text):
    """Every name and attribute name a program uses (`torch.compile` -> torch, compile)."""
    out = set()
    for n in ast.walk(ast.parse(text)):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.alias):
            out.update(n.name.split("."))
    return out


# ------------------------------------------------------------------ the literal pass
class _Lit(ast.NodeTransformer):
    """Replace the int literals at the given indexes (every int counts, so a literal made 1 keeps the
    others' index) with value."""

    def __init__(self, targets, value):
        self.targets, self.value, self.i = set(targets), value, -1

    def visit_Constant(self, node):
        if type(node.value) is int:
            self.i += 1
            if self.i in self.targets:
                return ast.copy_location(ast.Constant(self.value), node)
        return node


def _ints(text):
    out = []

    class _Collect(ast.NodeVisitor):
        def visit_Constant(self, node):
            if type(node.value) is int:
                out.append(node.value)
    _Collect().visit(ast.parse(text))
    return out


def _with_literals(text, idxs, value):
    return ast.unparse(ast.fix_missing_locations(_Lit(idxs, value).visit(ast.parse(text))))


def shrink_literals(text, test, deadline, jobs=1, on_keep=None):
    """Cost first: loop counts, step counts and sizes before statements. Each int value >= 2 (largest
    first) is tried as 1, 2 and v // 8 (v >= 16) everywhere it appears at once (a size used in several
    places), then, if that fails, at each place alone; the smallest that keeps the failure is kept.
    Candidates of one step run `jobs` at a time."""
    def first_kept(cands):
        if jobs > 1:
            with ThreadPoolExecutor(jobs) as ex:
                oks = list(ex.map(test, cands))
        else:
            oks = []
            for c in cands:
                oks.append(test(c))
                if oks[-1]:
                    break
        return next((c for c, ok in zip(cands, oks) if ok), None)

    changed = True
    while changed and time.monotonic() < deadline:   # again while a round changed something: a count
        changed, before = False, text                  # may only shrink once another one has
        text = _literal_round(text, first_kept, deadline, on_keep)
        changed = text != before
    return text


def _literal_round(text, first_kept, deadline, on_keep):
    order = _ints(text)
    for v in sorted({x for x in order if x >= 2}, reverse=True):
        if time.monotonic() > deadline:
            break
        tries = [c for c in ([1, 2] + ([v // 8] if v >= 16 else [])) if c < v]
        where = [i for i, x in enumerate(order) if x == v]
        groups = [where] + ([[i] for i in where] if len(where) > 1 else [])
        for g in groups:
            if time.monotonic() > deadline:
                break
            if any(order[i] != v for i in g):    # already changed by an earlier group
                continue
            got = first_kept([_with_literals(text, g, c) for c in tries])
            if got is not None:
                text = got
                order = _ints(text)
                if on_keep:
                    on_keep(text)
                if g is where:
                    break
    return text


def without_docstrings(text):
    """The program without its docstrings (module, classes, functions; a body left empty gets `pass`)."""
    tree = ast.parse(text)
    for n in ast.walk(tree):
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body \
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant) \
                and isinstance(n.body[0].value.value, str):
            n.body = n.body[1:] or [ast.Pass()]
    return ast.unparse(ast.fix_missing_locations(tree))


def without_constant_statements(text):
    """The program without statements that are a bare constant (`0`, `None`, `...`: what pysource-minimize
    leaves where it replaced an expression); a body left empty gets `pass`."""
    tree = ast.parse(text)
    for n in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(n, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                kept = [b for b in body if not (isinstance(b, ast.Expr) and isinstance(b.value, ast.Constant))]
                if len(kept) != len(body):
                    setattr(n, field, kept or ([ast.Pass()] if field == "body" else []))
    return ast.unparse(ast.fix_missing_locations(tree))


# ------------------------------------------------------------------ the reduction