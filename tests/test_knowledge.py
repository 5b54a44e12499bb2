"""knowledge/*.yaml: well-formed, consistent with the installed torch and the skills, rendered pages fresh."""
import os
import re
import subprocess
import sys

from conftest import ROOT, fresh_cache, program, run_json

from cdlib.decide import knowledge


def test_triage_rows_well_formed():
    skills = set(os.listdir(os.path.join(ROOT, "skills")))
    ids = [r["id"] for r in knowledge.triage_rows()]
    assert len(ids) == len(set(ids)) and ids[-1] == "user_error"
    required = {"graph_break_fullgraph", "backend_compiler_failed", "inductor_compile_error", "triton_compile_error",
                "compiled_runtime_error", "recompile_limit", "recompile_error", "accuracy_mismatch",
                "dynamo_internal_error", "export_error", "aoti_error", "segfault", "cuda_illegal_memory_access",
                "missing_cxx_compiler", "timeout"}
    assert required <= set(ids)
    for r in knowledge.triage_rows():
        assert r["title"] and r["advice"] and r.get("side", "compiler") in ("user", "custom_op", "either", "compiler")
        # user-side and custom-op rows send the user to their own line, not to another command; a compiler-side
        # row without one is set by a triage rule (no patterns) or names a known open bug, and says what to do in
        # its advice
        assert r["command"].startswith("{cli} ") if "command" in r else (
            r.get("side") in ("user", "custom_op") or not r.get("patterns") or re.match(r"pytorch#\d+$", r.get("known_bug", "")))
        if r.get("side") in ("user", "custom_op"):
            assert "compiler bug" not in r["title"].lower()
        assert r["skill"] in skills, f"{r['id']}: skill {r['skill']} does not exist"
        for p in r.get("patterns") or []:
            re.compile(p)


def test_graph_break_recipes_use_real_registry_ids():
    reg = knowledge.gb_registry()
    assert len(reg) > 200
    data = knowledge.load("graph_breaks")
    for gid, r in data["recipes"].items():
        assert gid in reg or knowledge.newer_than_installed(r.get("since")), \
            f"{gid} is not in torch's graph-break registry"
        assert r["category"] and r["fix"]
    for fb in data["fallbacks"]:
        re.compile(fb["pattern"])
        assert "use" not in fb or fb["use"] in data["recipes"]
    assert data["fallbacks"][-1]["pattern"] == ".*"


def test_guard_kinds():
    cases = {"tensor 'x' size mismatch at index 0. expected 2, actual 3": "shape",
             "tensor 'x' dtype mismatch. expected Float, actual Double": "dtype",
             "tensor 'feats' stride mismatch at index 1. expected 1, actual 160": "stride",
             "GLOBAL_STATE changed: grad_mode": "grad_mode", "GLOBAL_STATE changed: num_threads ": "num_threads",
             "self.use_relu == True": "module_attribute",
             "factor == 0.5": "python_float", "n == 3": "python_int",
             "text == 'I was charged twice for my subscription'": "python_str", 'mode == "train"': "python_str",
             "tensor 'x' requires_grad mismatch. expected requires_grad=1": "requires_grad",
             "___check_obj_id(L['fn'], 1403)": "object_identity", "len(L['xs']) == 2": "container_length",
             "len(G['m']._modules['0']._forward_hooks) != 1": "module_hooks",
             "tensor 'p' size mismatch at index 0. expected 64, actual 32. Guard failed on a parameter, consider "
             "using torch._dynamo.config.force_parameter_static_shapes = False to allow dynamism on parameters.":
             "parameter_shape",
             "___check_obj_id(G['m']._modules['0']._forward_hooks[list(dict.keys(G['m']._modules['0']._forward_hooks))[0]].__code__, 1)": "module_hooks",
             # an optimizer state tensor replaced by load_state_dict (blind A/B batch 35), not the dict's keys
             "___check_obj_id(self.state[list(dict.keys(self.state))[0]][list(dict.keys(self.state[list(dict.keys("
             "self.state))[0]]))[0]], 140000)": "optimizer_state_identity",
             # a compiled optimizer step with some parameters' .grad None on some steps (blind A/B batch 55)
             "self.param_groups[0]['params'][8].grad is not None": "optimizer_grad_none",
             "___check_obj_id(L['batch'][list(dict.keys(L['batch']))[0]], 1403)": "object_identity",
             "list(dict.keys(L['labels']))[0] == 'topic'": "dict_keys",
             "tensor 'self._modules['blocks']._modules['0']._modules['attn']._buffers['k_cache']' size mismatch at "
             "index 2. expected 38, actual 39": "module_buffer_shape",
             "___check_type_id(self._modules['conv'], 94465655536720), type=<class "
             "'torch.nn.utils.parametrize.ParametrizedConv1d'>": "parametrized_module_type"}
    for guard, kind in cases.items():
        assert knowledge.guard_kind(guard)["kind"] == kind, guard


def test_a_value_reached_through_a_closure_is_named_as_torch_names_it():
    """Blind A/B batch 16: a monitor's call counts in a dict a class method closes over. torch's guard reads
    `dict(type(obj).__dict__)['__call__'].__closure__[0].cell_contents['blocks.0'] == 0`: it was filed as an
    argument-type change ("type(" inside the path) with "pass arguments of one type". It is an int value,
    named as torch's hint names it; torch's advice stays the hint."""
    from cdlib.decide.guard_failures import parse_guard_failure
    g = parse_guard_failure(
        "0/0: dict(type(self._modules['blocks']._modules['0'].forward.__kwdefaults__['_tap']).__dict__)['__call__']"
        ".__closure__[0].cell_contents['blocks.0'] == 0  # return self.head(x)  # vit.py:45 in forward "
        "(HINT: guard on \"calls\"['blocks.0']) (HINT: torch.compile considers integer attributes of the nn.Module "
        "to be static. Or convert this integer into a tensor.)")
    assert g.kind == "python_int" and g.cause == "value of `calls['blocks.0']`", (g.kind, g.cause)
    assert g.hint.startswith("torch.compile considers integer") and "guard on" not in g.hint, g.hint
    assert parse_guard_failure("0/0: n == 3  # a.py:3 in f (HINT: guard on \"n\")").hint is None
    assert knowledge.guard_kind("___check_type_id(L['x'], 94)")["kind"] == "type"


def test_torchs_advice_in_a_guard_text_is_its_hint():
    """torch appends advice to a parameter's guard text; the report shows it whole as PyTorch's hint (the
    view clipped it to "Guard failed on a parameter…": blind A/B batch 8's Muon optimizer) and the kind's
    fix names force_parameter_static_shapes, not automatic dynamic."""
    from cdlib.decide.guard_failures import parse_guard_failure
    g = parse_guard_failure("0/7: tensor 'p' size mismatch at index 0. expected 64, actual 32. Guard failed on a "
                            "parameter, consider using torch._dynamo.config.force_parameter_static_shapes = False "
                            "to allow dynamism on parameters.")
    assert g.kind == "parameter_shape" and g.guard == "tensor 'p' size mismatch at index 0. expected 64, actual 32."
    assert g.hint.startswith("Guard failed on a parameter") and g.hint.endswith("dynamism on parameters.")
    assert g.cause == "shape of `p` dim 0"
    fix = knowledge.guard_kind_by_id("parameter_shape")["fix"]
    assert "force_parameter_static_shapes" in fix and "p.detach()" in fix
    # blind A/B batch 10: gradual unfreezing flips requires_grad on parameters; torch appends the same advice,
    # which is about shapes: the kind is requires_grad and no shape hint is shown
    g = parse_guard_failure("0/3: tensor 'L['self']._modules['blocks']._modules['5']._parameters['weight']' "
                            "requires_grad mismatch. expected requires_grad=0. Guard failed on a parameter, consider "
                            "using torch._dynamo.config.force_parameter_static_shapes = False to allow dynamism on "
                            "parameters.")
    assert g.kind == "requires_grad" and g.hint is None, (g.kind, g.hint)
    assert g.guard.endswith("expected requires_grad=0.")


def test_rendered_pages_are_fresh():
    p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "render_knowledge.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout


FACTS_PROGRAM = r'''
import json, torch
from torch._dynamo.testing import CompileCounter
cfg = torch._dynamo.config
out = {"specialize_int": cfg.specialize_int, "specialize_float": cfg.specialize_float,
       "recompile_limit": cfg.recompile_limit, "trace_numpy": cfg.trace_numpy,
       "allow_unspec_int_on_nn_module": cfg.allow_unspec_int_on_nn_module}
cnt = CompileCounter()
f = torch.compile(lambda x, n: x * n, backend=cnt)
for n in range(2, 9):                        # an int argument that changes every call
    f(torch.ones(3), n)
out["int_arg_graphs"] = cnt.frame_count
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.step, self.scale = 0, 0.5
    def forward(self, x):
        return x * self.scale + self.step
m, cnt = M(), CompileCounter()
c = torch.compile(m, backend=cnt)
for i in range(6):                           # a float attribute that changes every call
    m.scale = 0.1 * (i + 1)
    c(torch.ones(2))
out["float_attr_graphs"] = cnt.frame_count
torch._dynamo.reset()
class D(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = 0.1
    def forward(self, x):
        return torch.nn.functional.dropout(x, p=self.p, training=True)
m, cnt = D(), CompileCounter()
c = torch.compile(m, backend=cnt)
for i in range(4):                           # a float attribute passed as an op's float argument
    m.p = 0.1 * (i + 1)
    c(torch.ones(2))
out["float_op_arg_graphs"] = cnt.frame_count
torch._dynamo.reset()
m, cnt = M(), CompileCounter()
c = torch.compile(m, backend=cnt)
for i in range(12):                          # an int attribute that changes every call: hits the limit
    m.step = i
    c(torch.ones(2))
out["graphs_at_limit"] = cnt.frame_count
print(json.dumps(out))
'''


def test_recompile_facts_hold_on_installed_torch():
    """What knowledge/recompiles.yaml and graph_breaks.yaml say about specialization, automatic dynamic
    and the recompile limit, checked by running it (backend=CompileCounter, no Inductor)."""
    import json
    p = subprocess.run([sys.executable, "-c", FACTS_PROGRAM], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    kinds = {k["kind"]: " ".join(k["fix"].split()) for k in knowledge.load("recompiles")["kinds"]}
    limit_fix = " ".join(knowledge.recompile_limit_fix().split())
    # ints: not specialized per value under the defaults; one recompile makes them dynamic
    assert got["specialize_int"] is False and got["int_arg_graphs"] == 2
    assert "becomes dynamic after its first change" in kinds["python_int"]
    assert "Each distinct int is specialized" not in kinds["python_int"]
    # floats (also nn.Module float attributes): dynamic after the first change
    assert got["specialize_float"] is False and got["float_attr_graphs"] == 2
    assert "Float attributes used in arithmetic become dynamic after their first change" in kinds["module_attribute"]
    # ... but a float passed as an op's float argument (dropout's p) recompiles for every value
    assert got["float_op_arg_graphs"] == 4
    assert "dropout's p" in kinds["module_attribute"] and "recompiles for every value" in kinds["module_attribute"]
    # int attributes of nn.Modules stay static; the limit counts cached graphs: 1 compile + 7 recompiles
    assert got["allow_unspec_int_on_nn_module"] is False
    assert got["recompile_limit"] == 8 and got["graphs_at_limit"] == got["recompile_limit"]
    assert "default 8 graphs: the first compile plus 7 recompiles" in limit_fix
    gb39 = " ".join(knowledge.load("graph_breaks")["recipes"]["GB0039"]["fix"].split())
    assert "the first compile plus 7 recompiles" in gb39
    # GB0105: trace_numpy is on by default, so the break means someone turned it off
    assert got["trace_numpy"] is True
    gb105 = " ".join(knowledge.load("graph_breaks")["recipes"]["GB0105"]["fix"].split())
    assert gb105.startswith("torch._dynamo.config.trace_numpy was set to False") and "the default is True" in gb105


def test_syntax_error_in_generated_code_is_not_the_users():
    """Seen on the H100 (torch 2.11): an injected Triton failure surfaces as Inductor failing to import
    its own generated module with a nested SyntaxError. That is compiler-side, never `syntax_error`."""
    from cdlib.decide import knowledge
    sig = ("InductorError: RuntimeError: Failed to import /tmp/cache/hp/chpzx6rvbpqfs7zusv7d45k5jm752vn2a3g7yjqm6ff26fug2mkn.py\n"
           "SyntaxError: invalid syntax (chpzx6rvbpqfs7zusv7d45k5jm752vn2a3g7yjqm6ff26fug2mkn.py, line 26)")
    assert knowledge.classify_error(sig)["id"] == "inductor_compile_error"
    assert knowledge.classify_error("SyntaxError: invalid syntax")["id"] == "syntax_error"
    assert knowledge.classify_error("InductorError: ModuleNotFoundError: No module named 'x'")["id"] != "import_error"


def test_a_vanished_gloo_peer_is_a_distributed_timeout():
    """gloo says a peer rank died in two ways: its socket closed, or a read/write on it was reset
    (seen on a loaded 2-core machine where a peer's exit raced its error)."""
    from cdlib.decide import knowledge
    for sig in ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
                "[127.0.0.1]:10895",
                "RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error "
                "[192.168.70.92]:25266: Connection reset by peer"):
        assert knowledge.classify_error(sig)["id"] == "distributed_timeout", sig
    assert knowledge.classify_error("ConnectionResetError: [Errno 104] Connection reset by peer")["id"] != \
        "distributed_timeout"


def test_the_shape_recipe_warns_rightly_that_mark_dynamic_is_strict(tmp_path):
    """knowledge/recompiles.yaml's shape fix says mark_dynamic raises where a lowering specializes the dim
    (a convolution's backward in training on CPU): run it (blind A/B batch 6 followed mark_dynamic into it)."""
    import subprocess
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=fresh_cache(tmp_path / "cache"))
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "programs", "mark_dynamic_conv_train.py")],
                       capture_output=True, text=True, timeout=600, env=env)
    if knowledge.installed_torch_version() >= (2, 14):
        assert p.returncode != 0 and "ConstraintViolationError" in p.stderr, p.stdout[-500:] + p.stderr[-2000:]
    else:   # 2.9 and 2.11 keep the dim dynamic there: the example says "torch 2.14+" (docs/versions.md)
        assert p.returncode == 0 and "no error" in p.stdout, p.stderr[-2000:]
    text = open(os.path.join(ROOT, "knowledge", "recompiles.yaml")).read()
    assert "mark_dynamic(x, 0) is strict" in text and "training on CPU, torch 2.14+)" in text


def test_the_bincount_recipe_runs_as_written_under_fullgraph(tmp_path):
    """knowledge/graph_breaks.yaml's bincount recipe (blind A/B batch 9, MoE token dispatch: torch's hint
    capture_dynamic_output_shape_ops led to GuardOnDataDependentSymNode): its code, as shown, in an MoE
    dispatch compiled with fullgraph=True, gives eager's result; the bincount it replaces breaks there."""
    import subprocess
    import textwrap
    import yaml
    recipe = next(c for c in yaml.safe_load(open(os.path.join(ROOT, "knowledge", "graph_breaks.yaml")))["constructs"]
                  if c["use"] == "histogram")
    config, body = recipe["code"].split("\n", 1)
    prog = "import torch\n" + config + "\n\ndef dispatch(idx, x, n_experts):\n" + textwrap.indent(body, "    ") + \
        textwrap.dedent("""
            parts = x.split(counts)
            return torch.cat([p * (i + 1) for i, p in enumerate(parts)])

        def with_bincount(idx, x, n_experts):
            counts = torch.bincount(idx, minlength=n_experts).tolist()
            return torch.cat([p * (i + 1) for i, p in enumerate(x.split(counts))])

        torch.manual_seed(0)
        idx = torch.randint(0, 4, (32,)).sort().values
        x = torch.randn(32, 3)
        want = dispatch(idx, x, 4)
        got = torch.compile(dispatch, fullgraph=True, backend="eager")(idx, x, 4)
        assert torch.equal(got, want)
        try:
            torch.compile(with_bincount, fullgraph=True, backend="eager")(idx, x, 4)
            print("bincount compiled")
        except Exception as e:
            print("bincount fails:", type(e).__name__)
        print("recipe ok")
        """)
    (tmp_path / "moe.py").write_text(prog)
    p = subprocess.run([sys.executable, str(tmp_path / "moe.py")], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=fresh_cache(tmp_path / "cache")))
    assert p.returncode == 0 and "recipe ok" in p.stdout, p.stdout[-1000:] + p.stderr[-3000:]
    assert "bincount fails" in p.stdout, p.stdout


def test_reordered_logging_drops_a_call_in_a_helper_as_the_recipes_say():
    """knowledge/graph_breaks.yaml and fixes.yaml say reorderable_logging_functions replays only calls made in
    the compiled function itself (blind A/B batch 10: a debug line in a helper vanished). Run it: if the
    installed torch replays the helper's call too, the caveat is stale and must go."""
    import subprocess
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "programs", "reorder_logging_helper.py")],
                       capture_output=True, text=True, timeout=300)
    if knowledge.installed_torch_version() < (2, 14):   # the recipe says "measured on 2.14 and 2.15"
        assert p.returncode != 0 and "Logger not supported" in p.stderr, p.stderr[-2000:]   # 2.9.1 (docs/versions.md)
        return
    assert p.returncode == 0 and "done" in p.stdout, p.stderr[-2000:]
    assert "from the compiled function tensor(6.)" in p.stdout and "from helper" not in p.stdout, p.stdout
    text = open(os.path.join(ROOT, "knowledge", "graph_breaks.yaml")).read()
    assert "one in a\n      function it calls is dropped without a warning" in text


def test_requires_grad_flips_on_one_parameter_after_another_are_not_one_switch():
    """Tried on a fresh program (gradual unfreezing of a transformers BERT): each stage flipped requires_grad
    on another layer's parameters, a recompile per stage, and each was called 'expected: one switch'."""
    from types import SimpleNamespace as NS
    from cdlib.decide.analyze_recompiles import _causes
    from cdlib.report import GuardFailure

    def rec(cid, param):
        g = GuardFailure(compile_id=cid, kind="requires_grad", cause=f"requires_grad of `{param}`",
                         guard=f"tensor '{param}' requires_grad mismatch.")
        return NS(compile_id=cid, failures=[g])
    one = _causes([rec("0/1", "layer.0.bias")], False)
    assert [c["expected"] for c in one] == [True]
    many = _causes([rec("0/1", "layer.2.bias"), rec("0/2", "layer.1.bias"), rec("0/3", "layer.0.bias")], False)
    assert [c["expected"] for c in many] == [False, False, False]


def test_one_layout_switch_of_a_carried_state_is_expected(tmp_path):
    """Blind A/B batch 33: a recurrent state, a fresh tensor on the first chunk and a slice of the output after,
    recompiles once on its strides; compare called the fixed program "mixed" and offered `fix` for it. One
    switch per function is expected (as requires_grad's); layouts switching on several inputs are not."""
    from types import SimpleNamespace as NS
    from cdlib.decide.analyze_recompiles import _causes
    from cdlib.report import GuardFailure

    def rec(cid, name):
        g = GuardFailure(compile_id=cid, kind="stride", cause=f"strides of `{name}` dim 0",
                         guard=f"tensor '{name}' stride mismatch at index 0. expected 32, actual 512")
        return NS(compile_id=cid, failures=[g])
    assert [c["expected"] for c in _causes([rec("0/1", "h")], False)] == [True]
    assert [c["expected"] for c in _causes([rec("0/1", "h"), rec("0/2", "c")], False)] == [False, False]
    # the real program: one stride recompile, labelled expected, and no recompile step in the Next
    tri, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable,
                      program("recompile_state_layout.py"), timeout=900)
    assert p.returncode == 0 and tri["exit_code"] == 0, p.stderr[-2000:]
    (f,) = tri["recompiles"]
    assert [c["kind"] for c in f["causes"]] == ["stride"] and f["causes"][0]["expected"], f["causes"]
    assert not any("recompile" in (s["why"] or "").lower() for s in tri["next_steps"]), tri["next_steps"]


def test_the_random_branch_recipe_runs_as_written_under_fullgraph(tmp_path):
    """Blind A/B batch 11: stochastic depth as `if self.training and random.random() < self.drop_path:`
    breaks every block (GB0170); the plain branch recipe did not say the 'tensor' is Dynamo's stand-in for
    random.random(). The construct is recognised, and its claims hold: the branch breaks under fullgraph
    (naming random_value_0 from 2.14); the recipe's code and its escape (the coin outside, only the block
    compiled) compile under fullgraph and keep the coin. (Not a bool passed in: when the first call takes the
    branch that returns x unchanged, Dynamo compiles nothing for that frame and never compiles it later.)"""
    import subprocess
    import textwrap
    import yaml
    from cdlib.decide import knowledge
    line = "if self.training and random.random() < self.drop_path:"
    assert knowledge.scalar_use(line) == "random_branch" and knowledge.scalar_use("if x.sum() > 0:") == "branch"
    assert knowledge.scalar_use("if np.random.random() < p:") == "branch"          # not a graph input there
    assert knowledge.scalar_use("if random.choice([0, 1]):") == "branch"
    rec = knowledge.construct_recipe("GB0170", line, "Data-dependent branching")
    assert rec["recipe_id"] == "construct:random_branch" and "random_value_0" in rec["fix"], rec
    recipe = next(c for c in yaml.safe_load(open(os.path.join(ROOT, "knowledge", "graph_breaks.yaml")))["constructs"]
                  if c["use"] == "random_branch")
    prog = textwrap.dedent("""
        import random
        import torch


        class Block(torch.nn.Module):
            def __init__(self, p):
                super().__init__()
                self.lin = torch.nn.Linear(8, 8)
                self.drop_path = p

            def block(self, x):
                return torch.relu(self.lin(x))

            def forward(self, x):
                if self.training and random.random() < self.drop_path:
                    return x
                return self.block(x) + x


        class Fixed(Block):
            def forward(self, x):
        RECIPE


        try:
            torch.compile(Block(0.5), fullgraph=True, backend="eager")(torch.randn(2, 8))
            print("no break")
        except Exception as e:
            print("breaks", type(e).__name__, "random_value_0" in str(e))
        torch.manual_seed(0)
        x = torch.randn(64, 8)
        f = torch.compile(Fixed(0.5), fullgraph=True, backend="eager")
        print("kept", sum(not torch.equal(f(x), x) for _ in range(200)))
        fixed = Fixed(0.5)
        fixed.load_state_dict(Block(0.5).state_dict())
        orig = Block(0.5)
        orig.load_state_dict(fixed.state_dict())
        orig.eval(), fixed.eval()
        want = orig.block(x) + x
        print("eval same", torch.equal(torch.compile(fixed, fullgraph=True, backend="eager")(x), want),
              torch.equal(orig(x), want))
        fixed.train()
        outs = [torch.compile(fixed, fullgraph=True, backend="eager")(x) for _ in range(50)]
        print("kept is the original branch", all(torch.equal(o, x) or torch.equal(o, want) for o in outs))
        m = Block(0.5)
        kept = lambda x: m.block(x) + x
        compiled_kept = torch.compile(kept, fullgraph=True, backend="eager")
        p = m.drop_path
        print("escape kept", sum(not torch.equal(x if random.random() < p else compiled_kept(x), x) for _ in range(200)))
        """).replace("RECIPE", textwrap.indent(recipe["code"], " " * 8))
    (tmp_path / "drop.py").write_text(prog)
    p = subprocess.run([sys.executable, str(tmp_path / "drop.py")], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=fresh_cache(tmp_path / "cache")))
    out = p.stdout.split()
    assert p.returncode == 0 and "breaks" in out, p.stdout + p.stderr[-2000:]
    import torch
    if tuple(map(int, torch.__version__.split(".")[:2])) >= (2, 14):
        assert "breaks Unsupported True" in p.stdout, p.stdout
    kept = int(out[out.index("kept") + 1])
    assert 60 < kept < 140, p.stdout          # a coin per call, not one baked in
    shown = recipe["escape"].split("`")[1]
    assert shown == "x if random.random() < p else compiled_kept(x)" and shown in prog, shown
    assert "eval same True True" in p.stdout and "kept is the original branch True" in p.stdout, p.stdout
    assert 60 < int(out[out.index("escape") + 2]) < 140, p.stdout


def test_advice_texts_each_said_once_and_quoted():
    """knowledge/advice.yaml: every entry is quoted somewhere (code or another yaml), every {advice:KEY}
    resolves, and the stale-cache fact reaches the triage row, the fake-kernel step and compare's note from
    that one entry."""
    import glob
    keys = set(knowledge.load("advice"))
    code = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(ROOT, "scripts", "cdlib", "**", "*.py"),
                                                                       recursive=True))
    yamls = "".join(open(p, encoding="utf-8").read() for p in glob.glob(os.path.join(ROOT, "knowledge", "*.yaml"))
                    if not p.endswith("advice.yaml"))
    for k in keys:
        assert re.search(rf"advice\([^)\n]*[\"']{k}[\"']", code) or f"{{advice:{k}}}" in yamls, \
            f"advice {k} is quoted nowhere"
    # said once: the stale-cache fact's issue number is in no analysis code
    assert "187319" not in re.sub(r"(?m)#.*$", "", code), "the stale-cache fact is restated in code"
    for ref in re.findall(r"\{advice:(\w+)\}", yamls):
        assert ref in keys, ref
    stale = knowledge.advice("stale_compile_cache")
    assert stale in knowledge.triage_row("custom_op_mutates_args")["advice"]
    assert "{advice:" not in str(knowledge.triage_rows())
    assert "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1" in stale and "pytorch#187319" in stale
    assert "{frames}" in knowledge.load("advice")["no_graph"]
    assert knowledge.advice("no_graph", frames="`f` (a.py:1)").startswith("Dynamo traced `f` (a.py:1)")


def test_size_arithmetic_kind_matches_a_pinned_float_only():
    """recompiles.yaml size_arithmetic: a float computed from a size compared with a constant (np.ceil of a
    division or a product) is pinned; a size compared with an int, or math.ceil kept symbolic, is not."""
    kind = lambda g: knowledge.guard_kind(g)["kind"]   # noqa: E731
    assert kind("(x.size()[1] / 8) == 5.0  # n = int(np.ceil(x.shape[1] / patch))") == "size_arithmetic"
    assert kind("(0.125*torch.sym_float(x.size()[1])) == 5.0  # n = int(np.ceil(x.shape[1] * 0.125))") \
        == "size_arithmetic"
    assert kind("Eq(IntTrueDiv(s53, 16), 6.0)") == "size_arithmetic"
    assert kind("x.size()[1] == 40") != "size_arithmetic"
    assert kind("Eq(CeilToInt(IntTrueDiv(s0, 8)), 5)") != "size_arithmetic"
    assert "np.ceil" in knowledge.guard_kind_by_id("size_arithmetic")["fix"]
