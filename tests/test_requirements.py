"""Every package the code, tests, examples, evals and benchmarks import is named in requirements.txt,
so the README's install step is all a fresh machine needs (a package installed by hand can't hide one).

Not counted: the standard library, the project's own modules (beside the importing file, or in scripts/,
tests/, tests/programs/site-packages),
imports guarded by `try: ... except ImportError` (or a broader except) and `pytest.importorskip`."""
import ast
import importlib.metadata
import os
import re
import sys

from conftest import ROOT

DIRS = ["scripts", "tests", "examples", "evals", "benchmarks"]
# import name -> distribution, where packages_distributions() can't tell (the module is not installed)
DIST = {"yaml": "pyyaml", "jinja2": "jinja2", "PIL": "pillow", "sklearn": "scikit-learn", "cv2": "opencv-python",
        "pysource_minimize": "pysource-minimize"}
# imports that fail by design: programs the tests run to see the CLI classify the failure
MISSING_BY_DESIGN = {"my_missing_model_zoo": "tests/error_corpus/import_error.py"}
CORPUS = os.path.join(ROOT, "tests", "error_corpus")   # holds programs with syntax errors on purpose
GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def _norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def required():
    """Normalized distribution names in requirements.txt."""
    names = set()
    for line in open(os.path.join(ROOT, "requirements.txt")):
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(_norm(re.match(r"[A-Za-z0-9._-]+", line).group()))
    return names


def _py_files():
    for d in DIRS:
        for dirpath, dirnames, files in os.walk(os.path.join(ROOT, d)):
            dirnames[:] = [n for n in dirnames if n not in ("__pycache__", "node_modules")]
            yield from (os.path.join(dirpath, f) for f in files if f.endswith(".py"))


# where the project's own modules are imported from (besides the importing file's directory)
LOCAL_PATHS = [os.path.join(ROOT, d) for d in ("scripts", "tests", os.path.join("tests", "programs", "site-packages"))]


def _parents(path):
    """The importing file's directory and those above it, up to the repository root: a test in a blind case's
    tests/ imports its project's module from the case folder (its conftest puts that on sys.path)."""
    d = os.path.dirname(path)
    while d.startswith(ROOT + os.sep):
        yield d
        d = os.path.dirname(d)


def _is_local(module, path):
    """The project's own module: a .py file or package beside the importing file (or above it, in the same
    project) or on LOCAL_PATHS."""
    return any(os.path.isfile(os.path.join(d, module + ".py")) or os.path.isdir(os.path.join(d, module))
               for d in list(_parents(path)) + LOCAL_PATHS)


def _guarded(handlers):
    for h in handlers:
        if h.type is None:
            return True
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if any(isinstance(t, ast.Name) and t.id in GUARDS for t in types):
            return True
    return False


def imports(tree):
    """(top-level module, line) of every unguarded absolute import in an AST."""
    found = []

    def visit(node, guarded):
        if isinstance(node, ast.Import):
            if not guarded:
                found.extend((a.name.split(".")[0], node.lineno) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if not guarded and node.level == 0 and node.module:
                found.append((node.module.split(".")[0], node.lineno))
        elif isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            g = guarded or _guarded(node.handlers)
            for child in node.body:
                visit(child, g)
            for child in node.handlers + node.orelse + node.finalbody:
                visit(child, guarded)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, guarded)

    visit(tree, False)
    return found


def distribution(module, installed=importlib.metadata.packages_distributions()):
    """The distribution name (normalized) that provides an import name."""
    if module in DIST:
        return _norm(DIST[module])
    dists = installed.get(module)
    return _norm(dists[0]) if dists else _norm(module)


def third_party_imports():
    """{module: [file:line, ...]} for every third-party import in the repo's Python files."""
    out = {}
    for path in _py_files():
        rel = os.path.relpath(path, ROOT)
        try:
            tree = ast.parse(open(path, encoding="utf-8").read(), rel)
        except SyntaxError:
            if path.startswith(CORPUS + os.sep):
                continue   # a corpus program that fails to parse on purpose
            raise
        for mod, line in imports(tree):
            if mod in sys.stdlib_module_names or _is_local(mod, path) or MISSING_BY_DESIGN.get(mod) == rel:
                continue
            out.setdefault(mod, []).append(f"{rel}:{line}")
    return out


def test_every_import_is_a_requirement():
    req = required()
    found = third_party_imports()
    assert {"torch", "yaml", "pytest", "hypothesis"} <= set(found), sorted(found)   # the scan sees them
    missing = {m: where for m, where in found.items() if distribution(m) not in req}
    assert not missing, "not in requirements.txt (the README's install step would not install them):\n" + \
        "\n".join(f"  {m} (distribution {distribution(m)}): imported at {', '.join(w[:3])}" for m, w in
                  sorted(missing.items()))


def test_scan_sees_only_unguarded_imports():
    tree = ast.parse("import a.b\nfrom c import d\nfrom . import e\n"
                     "try:\n    import f\nexcept ImportError:\n    import g\n"
                     "try:\n    import h\nexcept (OSError, ModuleNotFoundError):\n    pass\n"
                     "try:\n    import i\nexcept OSError:\n    pass\n"
                     "def t():\n    import j\n    k = pytest.importorskip('k')\n")
    assert [m for m, _ in imports(tree)] == ["a", "c", "g", "i", "j"]
    assert distribution("yaml") == "pyyaml" and distribution("torch") == "torch"
