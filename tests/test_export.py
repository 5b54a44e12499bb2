"""`export`: real torch.export runs on small models (tests/programs/export_models.py)."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import CLI, ROOT, program, resolve_dotted as _resolve, run_cli, run_json

MODELS = program("export_models.py")


def line_of(marker, path=MODELS):
    """Line number of the first line containing marker (so tests never hard-code line numbers)."""
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if marker in line:
                return i
    raise AssertionError(f"{marker!r} not in {path}")


def export(factory, *extra, tmp_path=None):
    args = ["export", f"{MODELS}:{factory}", *extra]
    if tmp_path is not None:
        args += ["--out", str(tmp_path)]
    r, p = run_json(*args, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return r


def problem(r, cls):
    hits = [p for p in r["problems"] if p["cls"] == cls]
    assert hits, f"no {cls} in {[p['cls'] for p in r['problems']]}"
    return hits[0]


def test_data_dependent_branch(tmp_path):
    r = export("data_dependent", tmp_path=tmp_path)
    assert r["status"] == "failed"
    assert r["attempts"]["non_strict"]["failure"]["cls"] == "data_dependent_guard"
    assert r["attempts"]["non_strict"]["failure"]["type"] == "GuardOnDataDependentSymNode"
    assert r["attempts"]["strict"]["failure"]["cls"] == "data_dependent_guard"
    p = problem(r, "data_dependent_guard")
    assert p["location"]["file"] == MODELS
    assert p["location"]["line"] == line_of("if x.sum() > 0")
    assert set(p["found_by"]) >= {"non_strict", "strict", "draft_export"}
    assert "torch.cond" in p["fix"] and "torch._check" in p["fix"]
    assert p["details"]["expr"]  # e.g. Eq(u0, 1)
    # tlparse --export HTML in the run dir, when tlparse is installed
    if shutil.which("tlparse"):
        html = r["artifacts"]["tlparse_html"]
        assert html and html.startswith(str(tmp_path)) and os.path.exists(html)
    assert os.path.exists(tmp_path / "report.md")
    # draft_export's own trace goes into the run dir (TORCH_DTRACE), not /tmp/export_<user>
    assert any(f.endswith(".log") for f in os.listdir(tmp_path / "draft_trace"))


@pytest.fixture(scope="module")
def refined_run():
    return export("refined", "--dynamic")


def test_constraint_refined_by_control_flow(refined_run):
    r = refined_run
    assert r["status"] == "failed"
    p = problem(r, "constraint_violation")
    assert p["location"]["line"] == line_of("if x.shape[0] > 4")
    sf = p["suggested_fix"]
    assert any("min=5" in c for c in sf["code"]), sf
    assert sf["verified"] is True  # PyTorch's suggestion applied and re-exported
    # --dynamic: Dim.AUTO proposal reads the refined range back and exports
    d = r["dynamic"]
    assert d["verified"] is True
    assert "min=5" in d["code"]
    row = [x for x in d["dims"] if x["input"] == "x" and x["dim"] == 0][0]
    assert row["dynamic"] and row["min"] == 5
    assert d["other_sizes"]["ok"] and d["other_sizes"]["shapes"][0][0] >= 5


def test_divisibility_fix_is_checked_against_the_model_not_applied_blindly(tmp_path):
    """A UNet-style skip concat only works on even sizes (blind A/B batch 13: the user had applied PyTorch's
    suggested `height = 8*_height` and the .pt2 then rejected half their page sizes). Triage's Next and the
    export command's view say the suggested fix accepts only multiples of K and give the eager check and
    the two edits; each claim is checked on the installed torch: eager fails on an odd size, padding the
    upsampled map to its skip or a negative-pad crop exports and serves odd sizes; a slice crop, or the
    padding written (k - h % k) % k, does not."""
    prog = program("export_divisible.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3", prog, timeout=600)
    why = d["next_steps"][0]["why"]
    assert why.startswith("PyTorch's suggested fix makes height a multiple of 2 and width a multiple of 2 "
                          "(height = 2*_height; width = 2*_width)"), why
    assert "negative F.pad" in why and "apply PyTorch's suggested fix" not in why, why
    r = export("divisible", tmp_path=tmp_path / "e")
    sf = problem(r, "constraint_violation")["suggested_fix"]
    assert sf["verified"] is True and "height = 2*_height" in sf["code"], sf
    md = open(tmp_path / "e" / "report.md").read()
    eg = sf["eager_off_multiple"]   # measured by the export command: the model itself needs the multiple
    assert eg["sizes"] == {"height": 17, "width": 21} and not eg["ok"] and "Sizes of tensors must match" in eg["error"], eg
    assert "Measured: the model run eagerly at height 17, width 21 (not a multiple): fails" in md, md[-1500:]
    assert "Fix: PyTorch's suggested fix makes height a multiple of 2" in md and "(-height) % 2" in md \
        and "# after applying the fix" not in md, md[-1500:]
    from cdlib.decide.export import divisible_advice   # each dim with its own factor (a (4, 2) pooling)
    assert "height a multiple of 4 and width a multiple of 2" in divisible_advice(
        ["_height = Dim('_height', min=2, max=64)", "height = 4*_height", "width = 2*_width"])

    def run(fix):
        return subprocess.run([sys.executable, prog], capture_output=True, text=True, env=dict(os.environ, FIX=fix),
                              timeout=600)
    # the model alone, eagerly, on an odd size (the program's classes, without its export call)
    odd = subprocess.run([sys.executable, "-c", "import torch\n"
                          f"src = open({prog!r}).read().split('model = TinyUNet()')[0]\n"
                          "ns = {}; exec(compile(src, 'm', 'exec'), ns)\n"
                          "ns['TinyUNet']().eval()(torch.randn(1, 3, 75, 61))"],
                         capture_output=True, text=True, timeout=600)
    assert odd.returncode != 0 and "Sizes of tensors must match" in odd.stderr, odd.stderr[-300:]
    for fix in ("skip", "negpad"):
        p = run(fix)
        assert p.returncode == 0 and "odd page (1, 2, 75, 61) max diff 0.0e+00" in p.stdout, (fix, p.stderr[-300:])
    for fix in ("slice", "negpad_mod"):
        p = run(fix)
        assert p.returncode != 0 and "Constraints violated" in p.stderr, (fix, p.stderr[-300:])


def test_dim_specialized_to_constant(tmp_path):
    r = export("specialized", "--no-strict", tmp_path=tmp_path)
    assert "strict" not in r["attempts"]
    p = problem(r, "specialized_dim")
    assert p["location"]["line"] == line_of("torch.ones(8, 3)")
    assert p["details"].get("value") == 8
    assert p["suggested_fix"]["code"] == ["batch = 8"] and p["suggested_fix"]["verified"] is True
    assert "Dim.STATIC" in p["fix"]
    # it exports because batch is then one size: not shown as "verified" (blind A/B batch 61: `chars = 38`)
    md = (tmp_path / "report.md").read_text()
    assert "exports, but only because it makes batch a single size" in md and "(verified" not in md, md


def test_custom_op_without_fake_kernel():
    r = export("custom_op")
    p = problem(r, "missing_fake_kernel")
    assert p["location"]["line"] == line_of("return no_fake(x) + 1")
    assert "no_fake" in p["details"]["op"]
    assert "register_fake" in p["fix"]
    assert "draft_export" in p["found_by"]
    assert any(f["failure_type"] == "MISSING_FAKE_KERNEL" for f in r["draft_export"]["failures"])


def test_mismatched_fake_kernel_found_by_draft_export():
    r = export("bad_fake_kernel", "--no-strict")
    assert r["status"] == "exported"  # export trusts the fake kernel; draft_export runs the real one
    p = problem(r, "mismatched_fake_kernel")
    assert p["found_by"] == ["draft_export"]
    assert p["location"]["line"] == line_of("return torch.empty_like(x)  # wrong") - 1  # the register_fake def
    assert "bad_fake" in p["details"]["op"] and "real value" in p["details"]["reason"]


def test_graph_break_only_in_strict_mode():
    r = export("strict_only", "--no-draft")
    assert r["status"] == "exported" and r["attempts"]["non_strict"]["ok"]
    p = problem(r, "graph_break")
    assert p["found_by"] == ["strict"]
    assert p["location"]["line"] == line_of("torch._dynamo.graph_break()  # fine")
    assert p["details"]["gb_id"] == "GB0025"
    assert "strict=False" in p["fix"]


def test_clean_model_and_dynamic_proposal():
    r = export("clean", "--dynamic")
    assert r["status"] == "exported"
    assert r["problems"] == []
    assert all(a["ok"] for a in r["attempts"].values())
    assert r["draft_export"]["ok"] and r["draft_export"]["failures"] == []
    d = r["dynamic"]
    assert d["verified"] is True
    # x and y share the batch dim (y is added to lin(x)): one Dim for both
    m = re.search(r"'x': \{0: (\w+)\}", d["code"])
    assert m and f"'y': {{0: {m.group(1)}}}" in d["code"], d["code"]
    # x's feature dim is fixed by the Linear weight: static
    assert [x for x in d["dims"] if x["input"] == "x" and x["dim"] == 1][0]["dynamic"] is False
    # the exported program also runs (and matches eager) with another batch size
    oth = d["other_sizes"]
    assert oth["checked"] and oth["ok"], oth
    assert oth["shapes"][0][0] == oth["shapes"][1][0] != 6
    assert "aoti" in r["next_command"]


def test_markdown_report(refined_run):
    # the Markdown view of the same run (emit() saves it as report.md in the run dir)
    out = open(os.path.join(refined_run["run_dir"], "report.md")).read().strip()
    assert "constraint_violation" in out and f"export_models.py:{line_of('if x.shape[0] > 4')}" in out
    assert "Dim('batch', min=5)" in out and "dynamic_shapes = {" in out
    from cdlib.cmdline import cli_command
    assert out.splitlines()[-1].startswith(f"Next: `{cli_command()} ")  # the CLI as it runs here


def test_markdown_on_stdout_progress_on_stderr():
    p = run_cli("export", f"{MODELS}:clean", "--no-strict", "--no-draft", timeout=600, check=0)
    assert p.stdout.startswith("# export ") and "EXPORTED" in p.stdout
    assert "[compile-debug]" in p.stderr and "[compile-debug]" not in p.stdout


@pytest.mark.parametrize("spec, needle", [
    ("tests/programs/nope.py:make", "no such file"),
    ("tests/programs/export_models.py", "FACTORY"),
    ("export_models", "expected a model target"),
    ("tests/programs/export_models.py:missing_factory", "no callable"),
    ("tests/programs/export_models.py:raises", "ValueError: factory failed on purpose"),
    ("tests/programs/export_models.py:not_a_tuple", "must return"),
])
def test_bad_inputs_one_line_exit_2(spec, needle):
    p = run_cli("export", spec, cwd=ROOT, timeout=300)
    assert p.returncode == 2, p.stderr
    lines = [l for l in p.stderr.strip().splitlines() if not l.startswith("[compile-debug]")]
    assert len(lines) == 1 and needle in lines[0], p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    if "raises" in spec:  # the user's line, not ours
        assert f"export_models.py:{line_of('raise ValueError')}" in lines[0]


def test_help_is_fast_and_does_not_import_torch():
    for cmd in ("export", "aoti"):
        t0 = time.monotonic()
        p = subprocess.run([sys.executable, "-X", "importtime", CLI, cmd, "--help"], capture_output=True, text=True)
        assert p.returncode == 0
        assert not re.search(r"\|\s+torch(\.|$)", p.stderr, re.M), "torch imported by --help"
        assert time.monotonic() - t0 < 5


# ---------------------------------------------------------------- skills name only real APIs

SKILL_FILES = [os.path.join(ROOT, "skills", s, f) for s in ("export", "aoti")
               for f in ("SKILL.md", *(os.path.join("references", x) for x in
                                       sorted(os.listdir(os.path.join(ROOT, "skills", s, "references")))))]


def _skill_text():
    return "\n".join(open(f).read() for f in SKILL_FILES)



def test_skill_frontmatter():
    for s in ("export", "aoti"):
        text = open(os.path.join(ROOT, "skills", s, "SKILL.md")).read()
        m = re.match(r"---\n(.*?)\n---\n", text, re.S)
        assert m
        fm = dict(re.findall(r"^([\w-]+): (.*)$", m.group(1), re.M))
        assert fm["name"] == s
        assert len(fm["description"]) <= 1024 and "<" not in fm["description"] and ">" not in fm["description"]
        assert fm["allowed-tools"] == 'Bash(python3 "${CLAUDE_PLUGIN_ROOT}/scripts/compile_debug.py" *)'
        assert "!`" not in text
        assert f'compile_debug.py" {s} ' in text  # the command to run first


def test_skill_apis_exist_in_installed_torch():
    import torch  # noqa: F401
    import torch._inductor.config as icfg
    text = _skill_text()
    names = set(re.findall(r"\btorch(?:\.[A-Za-z_]\w*)+", text))
    assert "torch._inductor.aoti_compile_and_package" in names
    for n in sorted(names):
        n = n.rstrip(".")
        if n.endswith(".pt2") or n.endswith(".py"):
            continue
        _resolve(n)  # raises if missing
    # inductor config names given as KEY=VALUE or `section.name`
    cfgs = set(re.findall(r"`((?:aot_inductor|cpp|triton)\.\w+)", text)) | \
        set(re.findall(r"`([a-z_]\w*)=(?:true|false|\d)", text))
    assert "aot_inductor.debug_intermediate_value_printer" in cfgs
    for c in sorted(cfgs):
        obj = icfg
        for p in c.split("."):
            assert hasattr(obj, p), f"torch._inductor.config has no {c}"
            obj = getattr(obj, p)
    # env vars: each must appear in torch's source (python or generated C++ templates)
    envs = set(re.findall(r"\b((?:AOTI|AOT_INDUCTOR|AOTINDUCTOR|TORCHINDUCTOR|TORCH|PYTORCH|DUMP|CUDA)_[A-Z0-9_]+)", text))
    assert {"AOTI_RUNTIME_CHECK_INPUTS", "AOT_INDUCTOR_DEBUG_INTERMEDIATE_VALUE_PRINTER", "DUMP_AOTI_MINIFIER"} <= envs
    tdir = os.path.dirname(torch.__file__)
    missing = []
    for e in sorted(envs):
        p = subprocess.run(["grep", "-rlq", "--include=*.py", "--include=*.h", "--include=*.cpp", e, tdir])
        if p.returncode != 0:
            missing.append(e)
    assert not missing, f"env vars not found in torch source: {missing}"
    # bug-injection values named in the skill are the ones the codegen accepts
    src = open(os.path.join(tdir, "_inductor", "codegen", "cpp.py")).read()
    for v in ("compile_error", "runtime_error", "accuracy"):
        assert f'bug == "{v}"' in src


@pytest.mark.parametrize("factory", ["auto_dict", "named_tuple"])
def test_factory_returning_dynamic_shapes_third(factory, tmp_path):
    """(model, args, dynamic_shapes) with Dim / Dim.AUTO specs: recognised, not passed as kwargs."""
    r, p = run_json("export", f"{program('export_dyn_factory.py')}:{factory}", "--out", tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert r["status"] == "exported" and "multiple values" not in p.stdout + p.stderr
    batch = r["attempts"]["non_strict"]["graph"]["inputs"][0]["shape"][0]
    assert not batch.isdigit() and batch in r["attempts"]["non_strict"]["graph"]["range_constraints"]  # dim 0 dynamic


def test_factory_with_a_non_dict_third_item_gets_one_line():
    p = run_cli("export", f"{program('export_dyn_factory.py')}:bad_third", cwd=ROOT, timeout=300)
    lines = [l for l in p.stderr.strip().splitlines() if not l.startswith("[compile-debug]")]
    assert p.returncode == 2 and len(lines) == 1 and "Traceback" not in p.stderr
    assert "(model, args, dynamic_shapes)" in lines[0] and "kwargs_dict" in lines[0]


def test_triage_of_a_batch_of_one_does_not_suggest_a_static_batch(tmp_path):
    """Blind A/B batch 5: a Dim("batch") traced with one sample. PyTorch suggests "batch = 1", which makes
    the batch static; triage names the example size instead, and its Next never repeats that suggestion."""
    rep, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable,
                      program("export_batch_one.py"), timeout=600)
    e = rep["errors"][0]
    assert e["category"] == "export_example_size_one", e["category"]
    first = rep["next_steps"][0]["why"]
    assert "size 2 or more" in first and "static" in first, first
    assert not any("apply PyTorch's suggested fix" in s["why"] for s in rep["next_steps"]), rep["next_steps"]


def test_an_exported_programs_input_guard_names_the_export_call(tmp_path):
    """Blind A/B batch 16: an export step then a serving check (`bash -c "python export.py && python serve.py"`),
    Dim.AUTO on one input's batch dim with a tied input's left static. The serving check printed each
    "Guard failed: dense.size()[0] == 64" and exited 1; triage said "a bug in your program". Now the row
    names the guard and the export call whose dynamic_shapes fix it (a shell command's scripts are read);
    Dim.DYNAMIC fails at export and names the dim (the advice's "measured"); marking both dims fixes it."""
    prog = program("export_linked_static_dim.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "bash", "-c",
                    f"CATCH=1 {sys.executable} {prog}", check=0, timeout=600)
    (e,) = d["errors"]
    assert e["category"] == "export_specialized_input" and "Guard failed: items.size()[0] == 4" in e["message"], e
    why = d["next_steps"][0]["why"]
    assert "Guard failed: items.size()[0] == 4" in why and "export_linked_static_dim.py:24 `export(...)`" in why, why
    p = subprocess.run([sys.executable, prog], env=dict(os.environ, DIM="dynamic"), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode != 0 and "Constraints violated (L['query'].size()[0])" in p.stderr, p.stderr[-1500:]
    cmp_, _ = run_json("compare", tmp_path / "t", "--", "bash", "-c", f"FIXED=1 CATCH=1 {sys.executable} {prog}",
                       check=0, timeout=600)
    assert cmp_["after"]["exit_code"] == 0, cmp_["after"]


def test_a_suggested_bound_on_a_dim_is_not_offered_as_the_fix(tmp_path):
    """Blind A/B batch 17: a rotary table built for 128 rows and grown only eagerly; export with seq up to 512
    failed and PyTorch suggested `seq = Dim('seq', max=128)`, which the Next repeated (the user had tried it:
    the .pt2 then rejected 300 tokens). Now the Next says what the bound costs and that the fix is the code that
    made it (a fixed-length table), and building the table at the largest size exports (checked here)."""
    prog = program("export_lazy_table_bound.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    why = d["next_steps"][0]["why"]
    assert "PyTorch's suggested fix bounds seq (seq = Dim('seq', max=16))" in why and "apply PyTorch" not in why, why
    # the trace's guard_added events name the line that added the bound
    assert "The guard `seq <= 16` comes from export_lazy_table_bound.py:23 `if seq > self.pos.shape[0]:`" in why, why
    p = subprocess.run([sys.executable, prog], env=dict(os.environ, FULL="1"), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "exported: torch.Size([2, 40, 8])" in p.stdout, p.stderr[-1500:]


def test_a_fake_kernel_in_a_module_never_imported_is_named(tmp_path):
    """Blind A/B batch 35: a Library("ctr", "DEF") op whose register_fake lived in ctr_ops_meta.py, imported only by
    the op's tests: export raised UnsupportedOperatorException and torch.compile broke the graph at the op (GB0090);
    triage said "run the export command on a factory". Now the export error's Next and the break's fix name the
    fake kernel's file and line and that the program never imports it; importing it exports and matches eager."""
    prog = program("export_op_fake_not_imported.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    e = d["errors"][0]
    assert e["type"] == "UnsupportedOperatorException" and e["fake_elsewhere"]["op"] == "tagger::bucketize_ids", e
    first = d["next_steps"][0]
    assert first["why"].startswith("tagger::bucketize_ids has a fake kernel at tagger_ops_fake.py:8, but this program "
                                   "never imports tagger_ops_fake"), first
    assert first["command"] is None and first.get("decides"), first
    gb = [b for b in d["graph_breaks"] if b["gb_id"] == "GB0090"]
    assert gb and "tagger_ops_fake.py:8" in gb[0]["fix"]["fix"], d["graph_breaks"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "exported vs eager 0.0" in fixed.stdout, fixed.stderr[-1500:]


def test_a_dim_made_static_is_traced_to_the_line_that_needed_an_int(tmp_path):
    """Blind A/B batch 35: torch.linspace(1, 0, T) after a stride-2 conv; export said "Constraints violated
    (frames)", its guard was the conv's length formula, and the Next repeated PyTorch's `frames = 256` (a static
    dim, the opposite of the goal). Now the trace's guard_added event names the linspace line (torch asked for the
    size as an int there); the Route points at that Next, and the arange rewrite exports and matches eager."""
    prog = program("export_int_size_specialized.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    first = d["next_steps"][0]
    assert "`frames = 32` would make frames static" in first["why"] and "apply PyTorch" not in first["why"], first
    assert "export_int_size_specialized.py:24 `ramp = torch.linspace(1.0, 0.0, T, dtype=h.dtype)`" in first["why"], first
    assert "plain Python int" in first["why"] and first["command"] is None and first.get("decides"), first
    site = d["errors"][0]["guard_site"]
    assert site["kind"] == "specialized" and site["int_arg"] and site["location"]["line"] == 24, site
    with open(os.path.join(d["run_dir"], "report.md")) as f:
        md = f.read()
    assert "Route: Next 1 below names the cause of the export error" in md, md[:800]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "frames 100 max diff vs eager 0.0" in fixed.stdout, fixed.stderr[-1500:]


@pytest.mark.slow
def test_a_bound_added_by_a_fake_kernel_is_named_with_its_line(tmp_path):
    """Blind A/B batch 25: a custom op's fake kernel branched on the history length (`k if L >= k else L`), so
    export suggested `Dim('hist_len', min=8, ...)`, which would reject short histories; the Next said "a Python
    branch on the size" without the line, and both arms read the program to find it. Now the Next names the
    line from the trace's guard_added events and says it is a fake kernel; the fixed fake kernel exports."""
    prog = program("export_fake_kernel_bound.py")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    why = d["next_steps"][0]["why"]
    assert "PyTorch's suggested fix bounds hist_len (hist_len = Dim('hist_len', min=4, max=64))" in why, why
    assert ("The guard `hist_len >= 4` comes from export_fake_kernel_bound.py:26 "
            "`kk = k if hist.shape[1] >= k else hist.shape[1]`, in the fake kernel of topk_pool") in why, why
    site = d["errors"][0]["guard_site"]
    assert site["location"]["line"] == 26 and site["fake_kernel"]["line"] == 25, site
    # two Dims bounded at the same number (review): each guard goes with its own Dim, by the guard's symbol
    d2, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t2", "--", sys.executable, prog, check=0,
                     env={"TWO": "1"}, timeout=600)
    assert len(d2["errors"][0]["suggested_fixes"]) == 2, d2["errors"][0]
    site2 = d2["errors"][0]["guard_site"]
    assert site2["guard"] == "hist_len >= 4" and site2["location"]["line"] == 26, site2
    p = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and "exported: torch.Size([2, 8])" in p.stdout, p.stderr[-1500:]


def test_the_constants_check_the_export_advice_shows_finds_an_unregistered_tensor(tmp_path):
    """knowledge/advice.yaml's export_constants names a check (blind A/B batch 32: a tied weight kept in a Python
    list was exported as lifted_tensor_0 and never refreshed by load_state_dict): run as written on a real export,
    it lists that tensor and nothing registered, and after save and load, load_state_dict leaves that copy alone."""
    import torch
    from cdlib.decide import knowledge
    text = " ".join(knowledge.advice("export_constants").split())
    check = re.search(r"`(\[s\.target for s in ep\.graph_signature[^`]+)`", text).group(1)

    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(10, 4)
            self._tied = [self.embed.weight]     # not registered: exported as a constant

        def forward(self, ids):
            return self.embed(ids) @ self._tied[0].t()

    m = Tied()
    ep = torch.export.export(m, (torch.tensor([[1, 2]]),))
    assert eval(check, {"ep": ep}) == ["lifted_tensor_0"]
    torch.export.save(ep, tmp_path / "m.pt2")        # saved and loaded: the constant is a copy of its own
    fresh = Tied().state_dict()
    mod = torch.export.load(tmp_path / "m.pt2").module()
    mod.load_state_dict(fresh)
    ids = torch.tensor([[3, 4]])
    ref = Tied()
    ref.load_state_dict(fresh)
    assert not torch.allclose(mod(ids), ref(ids))     # the constant kept its export-time value


def test_a_dynamic_shapes_spec_unlike_the_inputs_pytree_is_named(tmp_path):
    """Blind A/B batch 37: dynamic_shapes for a registered dataclass written as a dict keyed by its field names;
    torch's pytree says "Node type mismatch; expected <class 'list'>" and the generic export row sent the agent to
    write a factory. The class says how the spec mirrors the flattened dataclass and how to drop a str field
    (torch.utils._pytree.register_dataclass's field_names / drop_field_names, checked here to exist)."""
    import inspect
    import torch.utils._pytree as pytree
    assert {"field_names", "drop_field_names"} <= set(inspect.signature(pytree.register_dataclass).parameters)
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", "python3",
                    program("export_dataclass_spec.py"), timeout=300)
    e = d["errors"][0]
    assert e["category"] == "export_dynamic_shapes_structure" and e["side"] == "user", e
    assert "list of its fields in order" in e["advice"] and "drop_field_names" in e["advice"]
    md = (tmp_path / "t" / "report.md").read_text()
    assert "drop_field_names=[others])" in md     # the whole advice fits the report's Why line


def test_a_guard_export_cannot_prove_gets_dim_dynamic_with_the_same_bounds(tmp_path):
    """Blind A/B batch 44: torch.stft under Dim("samples", min=8000, max=64000) failed with a guard true on the
    whole range and no suggested fix; triage showed only "Constraints violated (samples)!" and sent the agent to
    write a factory for the export command. Now the report shows PyTorch's guard line and Next 1 names
    Dim.DYNAMIC with the same bounds, which exports with the range kept and matches eager (checked here)."""
    prog = program("export_stft_length.py")
    plain = subprocess.run([sys.executable, prog], capture_output=True, text=True, timeout=300)
    if plain.returncode == 0:
        pytest.skip("this torch exports the named Dim (2.9.1 does; 2.14-2.15 do not)")
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    first = d["next_steps"][0]
    assert first["why"].startswith("PyTorch suggests no narrower range: the guard (1 % (1 + (L['wav'].size()[1] // "
                                   "160))) != 0 (added at export_stft_length.py:"), first   # the line (batch 62)
    assert "must hold for every samples in 8000 <= samples <= 64000" in first["why"], first
    assert "Dim.DYNAMIC(min=..., max=...)" in first["why"] and first["command"] is None, first
    md = open(tmp_path / "t" / "report.md").read()
    assert "> - Not all values of samples = L['wav'].size()[1] in the specified range" in md, md
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, DYNAMIC="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "range ['VR[8000, 64000]']" in fixed.stdout, fixed.stdout + fixed.stderr[-1500:]
    assert float(fixed.stdout.split("exported vs eager ")[1]) < 1e-4, fixed.stdout
    # a guard that is a real restriction inside the range (`!= 100`) gets no such advice (review of batch 44:
    # Dim.DYNAMIC exports it with the range [2, 200] and fails at 100 rows at run time)
    d2, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t2", "--", sys.executable,
                     program("export_ne_size.py"), check=0, timeout=600)
    assert "!= 100" in json.dumps(d2["errors"][0]) and not any("Dim.DYNAMIC" in s["why"] for s in d2["next_steps"]), \
        d2["next_steps"]


def test_a_packed_sequence_lstm_export_names_the_tensor_used_as_a_size(tmp_path):
    """Blind A/B batch 48: a ticket router's nn.LSTM over pack_padded_sequence failed torch.export with "zeros():
    argument 'size' failed to unpack ... got FakeTensor"; triage's row was the generic export one and the export
    command's class "other" ("Read the message"). Now the row names the PackedSequence's batch_sizes (values of
    lengths) and the padded path, which exports (FIXED=1) and matches the packed model; the export command's
    classifier takes the same row."""
    prog = program("export_packed_lstm.py")
    data, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    e = data["errors"][0]
    assert e["category"] == "export_tensor_as_size", e
    assert "PackedSequence" in data["next_steps"][0]["why"] or "PackedSequence" in e["advice"], data["next_steps"]
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=600)
    m = re.search(r"max\|diff\| vs the packed model on a batch of 9: (\S+)", fixed.stdout)
    assert fixed.returncode == 0 and m and float(m.group(1)) < 1e-5, fixed.stderr[-2000:]
    from cdlib.run.workers import export_common
    exc = TypeError("zeros(): argument 'size' failed to unpack the object at pos 2 with error \"type must be tuple "
                    "of ints,but got FakeTensor\"")
    assert export_common.classify_exception(exc, strict=False)["cls"] == "export_tensor_as_size"


def test_a_scripted_submodule_in_an_exported_model_is_named_with_the_script_call(tmp_path):
    """Blind A/B batch 51: a front-end kept as torch.jit.script(...) inside the exported model; non-strict export
    raised "forward() takes 2 positional arguments but 3 were given" and triage sent the agent to the export factory
    command. Now the row names the TorchScript submodule and the program's torch.jit.script line; as a plain module
    (PLAIN=1) the model exports."""
    prog = program("export_scripted_submodule.py")
    data, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "r", "--", sys.executable, prog, timeout=600)
    e = data["errors"][0]
    assert e["category"] == "export_script_module" and e["advice"].endswith("export_scripted_submodule.py:21."), e
    assert not e["next_command"], e
    plain = subprocess.run([sys.executable, prog], env=dict(os.environ, PLAIN="1"), capture_output=True, text=True,
                           timeout=600)
    assert plain.returncode == 0 and "exported" in plain.stdout, plain.stderr[-2000:]


def test_an_export_under_an_outer_autocast_is_named_first_for_a_failing_gate(tmp_path):
    """Blind A/B batch 55 (dv): a "bf16" AOTInductor package exported inside torch.autocast computed in float32 (export
    records autocast only where the traced forward enters it); the gate comparing it with bf16 eager failed and the
    report's advice was warm-up state, shapes and constants. The export under the autocast block comes first, with
    its line and the block's; FIXED=1 (autocast inside a wrapper's forward) passes the gate."""
    prog = program("export_under_autocast_gate.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = open(prog).read().splitlines()
    with_at = next(i for i, ln in enumerate(lines, 1) if ln.strip().startswith("with torch.autocast") and
                   "export" in lines[i])
    why = d["next_steps"][0]["why"]
    part = (f"the export call at export_under_autocast_gate.py:{with_at + 1} runs inside the autocast block at "
            f"export_under_autocast_gate.py:{with_at}")
    assert part in why and why.index(part) < why.index("dynamic_shapes"), why
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "GATE PASSED" in fixed.stdout, fixed.stderr[-1500:]


def test_a_guard_on_an_input_passed_through_kwargs_is_named_at_the_export_not_the_call(tmp_path):
    """Blind A/B batch 58 (em): an attention_mask exported through **kwargs of a forward that names none, with Dims
    tied to input_ids': ep.module()'s generated _guards_fn raised NameError: name 'L' is not defined. The report said
    "the program's own" error at the call and offered lifted constants. Now: the row, the export's line, the route to
    the export's inputs; FIXED=1 (export only the inputs forward names) passes."""
    prog = program("export_kwargs_guard_name.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["errors"][0]["category"] == "export_guards_fn_unbound_input", d["errors"][0]
    assert "generated input check raised it" in d["verdict"]["summary"] and "the fix is in what is exported" in \
        d["verdict"]["summary"], d["verdict"]
    first = d["next_steps"][0]
    assert first["why"].startswith("The exported module's generated input check") and "export at " in first["why"] \
        and "**kwargs" in first["why"] and "CONSTANT_TENSOR" not in first["why"], first
    assert "Route: the export's inputs" in (tmp_path / "t" / "report.md").read_text()
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "parity max diff 0.00e+00" in fixed.stdout, fixed.stderr[-1500:]


def test_an_inequality_guard_export_added_names_the_view_and_the_explicit_size(tmp_path):
    """Blind A/B batch 59 (er): view(5, -1, D) on a packed input of 5 * batch made export keep "packed.size()[0] != 5"
    (batch 1 refused, range_constraints still [1, 64]); the report called it the program's own error and appended the
    export advice on constants. Now: row export_size_excluded with the explicit-size fix, which FIXED=1 applies."""
    prog = program("export_view_minus_one_batch1.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["errors"][0]["category"] == "export_size_excluded", d["errors"][0]
    why = d["next_steps"][0]["why"]
    assert "view(n, x.shape[0], d) instead of view(n, -1, d)" in why and "CONSTANT_TENSOR" not in why, why
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "batch 1: max|served-eager| = 0.00e+00" in fixed.stdout, fixed.stderr[-1500:]


def test_any_other_input_guard_of_an_exported_program_is_named_not_the_constants_advice(tmp_path):
    """Blind A/B batch 60 (et): a ViT exported from a square example refused every non-square input ("Guard failed:
    pixels.size()[3] == pixels.size()[2]"), and the report offered the lifted-constants advice. Any input guard of
    ep.module() now gets row export_input_guard (here a Dim's max: "x.size()[0] <= 64"); FIXED=1 widens the Dim."""
    from cdlib.decide import knowledge
    row = knowledge.classify_error("AssertionError: Guard failed: pixels.size()[3] == pixels.size()[2]")
    assert row["id"] == "export_input_guard", row["id"]
    prog = program("export_dim_max_guard.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert d["errors"][0]["category"] == "export_input_guard", d["errors"][0]
    why = d["next_steps"][0]["why"]
    assert "widen it in dynamic_shapes" in why and "CONSTANT_TENSOR" not in why, why
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                           timeout=300)
    assert fixed.returncode == 0 and "batch 100: max|diff| 0.00e+00" in fixed.stdout, fixed.stderr[-1500:]


def test_one_tensor_given_as_two_export_inputs_is_named_before_the_generic_export_advice(tmp_path):
    """Blind A/B batch 61 (fb): a change detector exported with {"before": probe, "after": probe} (through a helper
    that returns them); torch.export traced the two as one input, so the package read `after` for both tiles and the
    gate failed on every real pair. The report's advice was warm-up state and constants. The export with the shared
    tensor comes first, with the helper's line; with --vs-eager it is the own-check step, said once; giving each
    input its own tensor passes the gate. Names bound to literals and distinct tensors are not flagged."""
    from cdlib.decide.program_code import shared_export_inputs
    src = program("export_shared_example_input.py")
    prog = tmp_path / "export_shared_example_input.py"
    shutil.copy(src, prog)
    lines = prog.read_text().splitlines()
    probe_at = next(i for i, ln in enumerate(lines, 1) if ln.strip().startswith("probe = "))
    export_at = next(i for i, ln in enumerate(lines, 1) if "torch.export.export(" in ln)
    part = (f"the export at export_shared_example_input.py:{export_at} is given one tensor, `probe` "
            f"(export_shared_example_input.py:{probe_at}), as its inputs `query`, `candidate`")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, str(prog), timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    why = d["next_steps"][0]["why"]
    assert part in why and why.index(part) < why.index("CONSTANT_TENSOR"), why
    d, p = run_json("triage", "--vs-eager", "--no-tlparse", "--out", tmp_path / "v", "--", sys.executable, str(prog),
                    timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    whys = [s["why"] for s in d["next_steps"]]
    assert whys[0].startswith("the program's own comparison fails without torch.compile too") and part in whys[0], whys
    assert sum(part in w for w in whys) == 1, whys
    assert "BatchNorm statistics" not in whys[0], whys[0]
    prog.write_text(prog.read_text().replace('"candidate": probe}', '"candidate": probe.clone()}'))
    assert shared_export_inputs([str(prog)]) == []
    fixed = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, timeout=300)
    assert fixed.returncode == 0 and "gate passed" in fixed.stdout, fixed.stdout + fixed.stderr[-1500:]
    other = tmp_path / "other.py"
    other.write_text("import torch\nn = 3\nx = torch.rand(2, 3)\ny = torch.rand(2, 3)\n"
                     "ep = torch.export.export(m, (x, n, n))\nep = torch.export.export(m, (x, y))\n"
                     "ep = torch.export.export(m, (x, x))\n")
    assert [(f[1], f[2], f[4]) for f in shared_export_inputs([str(other)])] == [(7, "x", ["0", "1"])]
    # review of 0.33.164: a size passed twice is not a tensor; an input the model never reads changes nothing
    near = tmp_path / "near_miss.py"
    near.write_text("import torch\nclass M(torch.nn.Module):\n    def forward(self, x, context):\n"
                    "        return x * 2\nx = torch.rand(2, 3)\nk = x.shape[0]\n"
                    "ep = torch.export.export(M(), (x, k, k))\nep = torch.export.export(M(), (x, x))\n")
    assert shared_export_inputs([str(near)]) == []


def test_a_length_a_transformers_model_makes_static_names_its_lines_not_the_suggested_constant(tmp_path):
    """Blind A/B batch 61 (ex): a tiny CANINE exported with the message length dynamic; transformers' code fixes
    the length (nn.MaxPool1d on the mask, a range() loop in the local attention) and torch suggests `chars = 38`,
    which the report's Next said to apply. Now both library lines, the caller, and the two ways that keep serving
    every length; padding to fixed lengths with one export per length (BUCKETS=1) matches eager."""
    prog = program("export_hf_canine_length.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    why = d["next_steps"][0]["why"]
    assert why.startswith("PyTorch's suggested fix `chars = 38` would make chars static"), why
    assert "transformers/models/canine/modeling_canine.py:" in why and "MaxPool1d" in why and "range(" in why, why
    assert "(called from export_hf_canine_length.py:" in why and "Do not apply the suggestion" in why, why
    assert not d["next_steps"][0]["command"], d["next_steps"][0]
    ok = subprocess.run([sys.executable, prog], env=dict(os.environ, BUCKETS="1"), capture_output=True, text=True,
                        timeout=600)
    assert ok.returncode == 0 and ok.stdout.count("= 0.00e+00") == 2, ok.stdout + ok.stderr[-1500:]


def test_unprovable_length_guards_name_the_library_lines_the_float_math_and_the_batch1_risk(tmp_path):
    """Blind A/B batch 62 (fg): a tiny XLNet exported with the length dynamic; its float-step torch.arange makes the
    length ceil(float(...)) and its reshapes add guards export cannot prove, with no suggested fix. The report said
    only "Dim.DYNAMIC with your bounds", which on this model exports a program that rejects every batch-1 call. Now
    the library lines, the float math and the check at batch 1; DYNAMIC=1 shows that risk is real."""
    prog = program("export_hf_xlnet_float_arange.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    why = d["next_steps"][0]["why"]
    assert "added at transformers/models/xlnet/modeling_xlnet.py:" in why, why
    assert "through float math" in why and "batch 1" in why and "Dim.DYNAMIC" in why, why
    dyn = subprocess.run([sys.executable, prog], env=dict(os.environ, DYNAMIC="1"), capture_output=True, text=True,
                         timeout=600)
    assert "export ok" in dyn.stdout and "batch 1 seq 12: AssertionError: Guard failed" in dyn.stdout, dyn.stdout


def test_a_data_dependent_guard_in_a_library_call_names_that_call_and_precomputed_inputs(tmp_path):
    """Blind A/B batch 63 (fl): a tiny Qwen2-VL vision encoder exported with its page grid as a tensor input; the
    encoder splits attention by lengths read from the grid's values (torch.split(t, lengths.tolist())), and the
    report's Next was the generic .item()/torch._check advice at the program's call. Now the library call torch
    names, with the precomputed-inputs fix; cu_seqlens computed outside (PRECOMPUTED=1) exports and matches eager."""
    prog = program("export_hf_qwen2vl_grid_values.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    first = d["next_steps"][0]
    assert "in the transformers package: transformers/models/qwen2_vl/modeling_qwen2_vl.py:" in first["why"], first
    assert "lengths.tolist()" in first["why"] and "pass the results in" in first["why"], first
    assert first["command"] is None and first.get("decides"), first
    ok = subprocess.run([sys.executable, prog], env=dict(os.environ, PRECOMPUTED="1"), capture_output=True, text=True,
                        timeout=600)
    assert ok.returncode == 0 and "max|diff| 0.00e+00" in ok.stdout, ok.stdout + ok.stderr[-1500:]


def test_a_gru_length_export_fixes_names_torchs_rnn_loop_and_scan(tmp_path):
    """Blind A/B batch 63 (fh): a 2-layer nn.GRU exported with the length dynamic; torch's RNN decomposition loops over
    time in Python and the length became the example's. The report's text was the linspace/int-argument advice, which
    does not apply to a GRU. Now the decomposition's loop and the scan rewrite; SCAN=1 exports and matches eager."""
    prog = program("export_gru_length.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    why = d["next_steps"][0]["why"]
    assert "inside nn.GRU / nn.LSTM / nn.RNN" in why and "one_layer_rnn" in why and "scan" in why, why
    assert "linspace" not in why, why
    ok = subprocess.run([sys.executable, prog], env=dict(os.environ, SCAN="1"), capture_output=True, text=True,
                        timeout=600)
    assert ok.returncode == 0 and ok.stdout.count("max|diff|") == 2, ok.stdout + ok.stderr[-1500:]
    assert all(float(ln.split()[-1]) < 1e-5 for ln in ok.stdout.splitlines() if "max|diff|" in ln), ok.stdout


def test_an_export_failure_inside_a_librarys_export_path_names_that_path_and_the_eager_check(tmp_path):
    """Blind A/B batch 64: a tiny Informer exported; transformers builds the encoder's mask only while exporting
    (masking_utils checks is_torchdynamo_exporting()) and its distil layer halves the length before the next layer adds
    it. The Next was the generic `export <file.py:factory>`. Now the first names transformers' export checks and an
    eager call with that check patched to True; that call fails the same way here (the advice's claim, measured on the
    installed transformers), and the fix (no encoder mask while exporting) exports with eager's numbers."""
    pytest.importorskip("transformers")
    prog = program("export_hf_informer_mask.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert d["verdict"]["kind"] == "export_failure" and d["errors"][0]["category"] == "export_error", d["verdict"]
    first = d["next_steps"][0]["why"]
    assert "torch.export failed inside transformers (transformers/models/informer/modeling_informer.py:" in first, first
    assert "transformers/masking_utils.py:" in first and "is_torchdynamo_exporting()" in first, first
    assert 'mock.patch("transformers.masking_utils.is_torchdynamo_exporting", return_value=True)' in first, first
    assert "import_utils" not in first, first   # not the check's own definition
    assert "eager call: ok" in (tmp_path / "t" / "target.stdout").read_text()   # the check's control: plain eager passes
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run([sys.executable, prog], env=dict(env, EAGER_CHECK="1"), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 1 and "must match the size of tensor b (48)" in r.stderr, r.stderr[-1500:]
    r = subprocess.run([sys.executable, prog], env=dict(env, FIXED="1"), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "max |exported - eager| = 0.00e+00" in r.stdout, r.stderr[-1500:]
    # (review of 0.33.184) a library's own Python raising on the program's input (BERT given 1-D ids fails eagerly
    # too): no export-path step
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "b", "--", sys.executable,
                    program("export_hf_bert_1d_ids.py"), timeout=600)
    assert not any("runs other code while exporting" in s["why"] for s in d["next_steps"]), d["next_steps"]


def test_a_fake_lifted_constant_from_autograd_grad_in_forward_names_the_bug_and_make_fx(tmp_path):
    """Blind A/B batch 65: a force field's forward returns -dE/dpos from torch.autograd.grad; torch.export (2.14/2.15)
    fails "We found a fake tensor in the exported program constant's list ... lifted_tensor_0" (pytorch#146719).
    The row was the generic export_error ("Read the message", run `export` on a factory: a step for nothing). Now
    the row names the bug and make_fx-then-export as its Next; that workaround (FIXED=1) exports with eager's numbers."""
    import torch
    if not torch.__version__.startswith(("2.14", "2.15")):
        pytest.skip("torch 2.14/2.15's message")
    prog = program("export_autograd_grad_forces.py")
    d, p = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, timeout=600)
    assert d["errors"][0]["category"] == "export_fake_constant", d["errors"][0]
    first = d["next_steps"][0]["why"]
    assert "pytorch#146719" in first and "make_fx(model)(*example_inputs)" in first, first
    assert not d["next_steps"][0]["command"], d["next_steps"]
    r = subprocess.run([sys.executable, prog], env=dict(os.environ, FIXED="1"), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and "max |dE| 0.00e+00, max |dF| 0.00e+00" in r.stdout, r.stderr[-1500:]


def test_a_size_one_guard_on_a_slice_gets_backed_size_oblivious_measured(tmp_path):
    """Blind A/B batch 66: MobileBERT's trigram embedding pads e[:, 1:]; export records that slice's layout and guards
    `((-1) + L['input_ids'].size()[1]) != 1`, which excludes seq = 2 from Dim("seq", min=2), with no suggested fix.
    The export command's advice (Dim.AUTO / Dim.DYNAMIC) would narrow the range or reject length 2 when called, and
    named no line. Now triage names the line that added the guard and backed_size_oblivious; the export command
    exports under it, reads the ranges back and runs the exported program at their low ends; the fix holds."""
    from cdlib.decide.export import size_one_guard
    assert size_one_guard("((-1) + L['ids'].size()[1]) != 1") and size_one_guard("Ne(s70 - 1, 1)")
    assert not size_one_guard("L['x'].size()[1] != 1") and not size_one_guard("Ne(s70, 1)")
    assert not size_one_guard("(L['x'].size()[0]) != 100")
    prog = program("export_trigram_slice.py")
    line = next(i for i, ln in enumerate(open(prog), 1) if "F.pad(e[:, 1:]" in ln)
    d, _ = run_json("triage", "--no-tlparse", "--out", tmp_path / "t", "--", sys.executable, prog, check=0, timeout=600)
    first = d["next_steps"][0]
    assert f"(added at export_trigram_slice.py:{line} " in first["why"], first
    assert "backed_size_oblivious=True" in first["why"] and first["command"] is None, first
    assert "backed_size_oblivious" in d["errors"][0]["advice"], d["errors"][0]
    r, _ = run_json("export", f"{prog}:make", "--out", tmp_path / "e", "--no-strict", timeout=600)
    so = r["size_oblivious_check"]
    assert so["verified"] and sorted(so["range_constraints"].values()) == [[1, 64], [2, 128]], so
    assert so["at_low_end"]["checked"] and so["at_low_end"]["ok"] and so["at_low_end"]["shapes"] == [[1, 2]], so
    md = (tmp_path / "e" / "report.md").read_text()
    assert "Measured: `with torch.fx.experimental._config.patch(backed_size_oblivious=True):`" in md, md
    fixed = subprocess.run([sys.executable, prog], env=dict(os.environ, SIZE_OBLIVIOUS="1"), capture_output=True,
                           text=True, timeout=300)
    assert fixed.returncode == 0 and "range ['VR[1, 64]', 'VR[2, 128]']" in fixed.stdout, fixed.stderr[-1500:]
    assert float(fixed.stdout.split("exported vs eager ")[1]) < 1e-5, fixed.stdout
