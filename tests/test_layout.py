"""The code's shape (issue 23): no import circle inside scripts/cdlib, counting the imports made inside
functions too (a lazy import still ties two modules together)."""
import ast
import glob
import os

from conftest import ROOT

PKG = os.path.join(ROOT, "scripts", "cdlib")


def _graph():
    mods = {}
    for path in glob.glob(os.path.join(PKG, "**", "*.py"), recursive=True):
        name = os.path.relpath(path, PKG)[:-3].replace(os.sep, ".")
        mods[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        pkg = mod.split(".")[:-1] if not path.endswith("__init__.py") else mod.split(".")
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
            if not (isinstance(node, ast.ImportFrom) and node.level):
                continue
            base = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
            here = base + (node.module.split(".") if node.module else [])
            targets = [".".join(here)] + [".".join(here + [a.name]) for a in node.names]
            graph[mod] |= {t for t in targets if t in graph and t != mod}
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle():
    graph = _graph()
    assert len(graph) > 20 and "decide.analyze" in graph and "commands.triage" in graph
    assert _cycles(graph) == []


def test_the_check_sees_a_circle():
    g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(g) == [["a", "b", "c"]]


# The pipeline, top to bottom: a module imports only from its own layer or the layers below it.
# commands (arguments, orchestration) > show (Markdown/JSON views) > decide (analysis, verdicts,
# knowledge) > run (processes, run dir, startup hook, workers) > read (parsers of what a run left)
# > the base modules at the top of cdlib (errors, report, cmdline).
LAYERS = ["read", "run", "decide", "show", "commands"]


def _layer(mod):
    head = mod.split(".")[0]
    if head == "cli":           # the dispatcher: above every command
        return len(LAYERS)
    return LAYERS.index(head) if head in LAYERS else -1


def test_layers_point_down():
    graph = _graph()
    assert {m.split(".")[0] for m in graph} >= set(LAYERS)
    up = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                if _layer(t) > _layer(m))
    assert up == []


def test_every_module_has_a_layer():
    """Only the base modules live at the top of cdlib; everything else is in a layer folder."""
    top = sorted(m for m in _graph() if "." not in m and m not in LAYERS)
    assert top == ["__init__", "cli", "cmdline", "errors", "report"]
