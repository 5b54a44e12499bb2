"""Version drift: every torch name that the CLI's code and the knowledge tables rely on must exist in the
installed torch, so that a new torch release that renames or drops one fails here, in CI, with the name
and where we use it, instead of in a user's report. CI runs this file on every torch version it tests
(the newest in the full suite, the oldest and the previous minor in the smoke subsets).

Checked: dotted torch APIs and config names (scripts/**/*.py, knowledge/*.yaml), env vars (in torch's
source), TORCH_LOGS artifact loggers we attach to, and the structured-trace events and artifacts our
trace parser reads (recorded live from a small compile on this torch). The skills' own facts are
checked by test_skill_facts.py."""
import glob
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, fresh_cache
from test_skill_facts import API_RE, ENV_RE, resolve, torch_source

SOURCES = sorted(glob.glob(os.path.join(ROOT, "scripts", "**", "*.py"), recursive=True)
                 + glob.glob(os.path.join(ROOT, "knowledge", "*.yaml")))
# names that exist only in some supported versions, with why their use is safe where they are missing
# (docs/versions.md lists them); anything else missing from a supported torch fails the check
VERSION_ONLY = {
    "torch._dynamo.config.ignore_logging_functions": "2.11+; the fix is offered only when torch's own break "
                                                     "hint names it (knowledge/fixes.yaml match)",
    "torch._dynamo.config.ignore_logging_functions.add": "as above",
    "torch.compiler.nonstrict_trace": "2.14+; the recipe names torch._dynamo.nonstrict_trace for 2.9",
    "torch._dynamo.config.trace_autograd_ops": "not in 2.9 (CI 2.9.1 drift pass); named in a knowledge/fixes.yaml "
        "comment as an example of torch's hint text: the pytorch_hint_config rows take the switch from the hint the "
        "installed torch printed, so a torch without it never offers it",
    "torch._functorch.config.error_on_custom_op_aliasing": "in 2.11, 2.14 and 2.15 (checked); the triage row "
        "custom_op_output_aliases_input quotes it only when torch's own aliasing message was printed, which a "
        "torch without the check does not print",
    "torch._dynamo.config.capture_profiler_record_function": "in 2.14.1 and 2.15.0, not 2.9.1 (checked); the "
        "semantics class profiler_ranges_dropped names it (as not enough with Inductor) only when torch's own warning "
        "that record_function is ignored was printed, which 2.9.1 does not print",
    "torch._functorch.config.check_custom_op_aliasing": "in 2.14.1 and 2.15.0, not 2.9.1 (checked); the triage "
        "row custom_op_kernel_autograd names it as the workaround for the newer torch, and says so",
}
VERSION_ONLY_ENV = {
    "TORCH_COMPILE_BACKEND": "read by the compiler bisector of 2.11+; set beside TORCH_BISECT_BACKEND, which 2.9 reads",
    "TORCHINDUCTOR_ERROR_ON_CUSTOM_OP_ALIASING": "as torch._functorch.config.error_on_custom_op_aliasing (quoted "
        "only beside torch's own aliasing message)",
}
ARTIFACT_LOGGER_RE = re.compile(r"^(torch(?:\.\w+)+)\.__(\w+)$")   # torch._inductor.x.__cudagraphs


def _occurrences(regex):
    found = {}
    for path in SOURCES:
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                for m in regex.finditer(line):
                    found.setdefault(m.group(0).rstrip("."), f"{os.path.relpath(path, ROOT)}:{i}")
    return found


def _torch_version():
    import torch
    return torch.__version__


def test_torch_names_used_by_the_cli_exist():
    from torch._logging._internal import log_registry
    missing = []
    for name, where in sorted(_occurrences(API_RE).items()):
        if name.endswith((".py", ".json", ".md")) or re.search(r"\.[A-Z]+$", name) or name in VERSION_ONLY:
            continue        # file names; placeholders in docstrings (torch._dynamo.config.NAME)
        m = ARTIFACT_LOGGER_RE.match(name)
        if m:               # an artifact logger: its module must exist and the artifact be registered
            if resolve(m.group(1)) and m.group(2) in log_registry.artifact_names:
                continue
        elif resolve(name):
            continue
        missing.append(f"{name} (used at {where})")
    assert not missing, (f"torch {_torch_version()} lacks names that the CLI or knowledge/ use: "
                         + "; ".join(missing) + ". Guard the use, or list the name in VERSION_ONLY with the "
                         "versions that have it, and note it in docs/versions.md")


def test_env_vars_used_by_the_cli_exist():
    src = torch_source()
    ours = ("COMPILE_DEBUG",)
    unknown = [f"{v} (used at {w})" for v, w in sorted(_occurrences(ENV_RE).items())
               if v not in src and not v.startswith(ours) and v not in VERSION_ONLY_ENV]
    assert not unknown, f"torch {_torch_version()} no longer reads these env vars: {'; '.join(unknown)}"


# what scripts/cdlib/trace.py's users read from a TORCH_TRACE: events by key, artifacts by name, and
# the compilation_metrics fields the report is built from
EVENTS = ("dynamo_start", "compilation_metrics", "dynamo_output_graph", "inductor_output_code", "chromium_event",
          "aot_forward_graph", "aot_backward_graph", "bwd_compilation_metrics")
# events only some programs produce (guards of a frame, DDP's optimizer splits, a size the program made
# static, the shape guards export adds, with their Python stack): checked in torch's source
SOMETIMES = ("dynamo_cpp_guards_str", "optimize_ddp_split_child", "symbolic_shape_specialization", "guard_added",
             "guard_added_fast", "create_symbol")
# read as an event key or as an artifact name, under either name (torch 2.14+ / 2.9)
EITHER = (("inductor_post_grad_graph", "after_post_grad_graph"),)
ARTIFACTS = ("fx_graph_cache_miss", "aotautograd_cache_miss")
METRIC_FIELDS = ("co_name", "co_filename", "co_firstlineno", "graph_op_count", "graph_node_count",
                 "entire_frame_compile_time_s", "backend_compile_time_s", "inductor_compile_time_s", "fail_type",
                 "fail_reason", "guard_count", "compile_id")

_PROG = """
import torch
m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
f = torch.compile(m)
f(torch.randn(4, 8)).sum().backward()
"""


def test_trace_parser_keys_exist_in_a_live_trace(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from cdlib.read import trace as tracemod
    env = dict(os.environ, TORCH_TRACE=str(tmp_path / "trace"),
               TORCHINDUCTOR_CACHE_DIR=fresh_cache(tmp_path / "cache"))   # cold: the cache-miss artifacts appear
    subprocess.run([sys.executable, "-c", _PROG], env=env, check=True, timeout=600, capture_output=True)
    tr = tracemod.parse(str(tmp_path / "trace"))
    keys = {e.key for e in tr.events}
    names = {e.artifact_name for e in tr.events if e.key == "artifact"}
    fields = set().union(*(e.data for e in tr.of("compilation_metrics") if isinstance(e.data, dict)))
    gone = [f"event {k}" for k in EVENTS if k not in keys] \
        + [f"event or artifact {' / '.join(alt)}" for alt in EITHER if not set(alt) & (keys | names)] + [f"artifact {a}" for a in ARTIFACTS if a not in names] \
        + [f"compilation_metrics.{f}" for f in METRIC_FIELDS if f not in fields]
    assert not gone, f"torch {_torch_version()}'s TORCH_TRACE lacks what the trace parser reads: {gone}"


def test_every_event_the_code_reads_is_listed_here():
    """Keeps EVENTS above in step with the code: a new `tr.of("x")` in scripts/ must be added to it."""
    used = set()
    for path in SOURCES:
        if path.endswith(".py"):
            used.update(re.findall(r'\bof\("([a-z_]+)"\)', open(path, encoding="utf-8").read()))
    listed = set(EVENTS).union(*EITHER, SOMETIMES)
    assert used <= listed, f"add to EVENTS (and check them live): {sorted(used - listed)}"


def test_events_some_programs_produce_are_still_logged_by_torch():
    src = torch_source()
    gone = [e for e in SOMETIMES if e not in src]
    assert not gone, f"torch {_torch_version()} no longer logs these trace events: {gone}"


@pytest.mark.parametrize("name", ["torch._dynamo.config.repro_tolerance", "torch._dynamo.config.recompile_limit",
                                  "torch._inductor.config.fx_graph_cache"])
def test_a_renamed_config_is_reported_clearly(name):
    """The check itself: a name torch lacks is reported (not silently passed)."""
    assert resolve(name)
    assert not resolve(name + "_renamed_in_a_future_torch")


@pytest.mark.parametrize("version, expect", [
    ("2.8.0", "older than the oldest version this plugin supports (2.9)"),
    ("2.9.1", None), ("2.12.0", None), ("2.15.0+cu132", None),
    ("2.16.0.dev20261120", "newer than the versions tested (2.9-2.15: 2.9.1, 2.11.0, 2.14.1, 2.15.0)")])
def test_env_version_line_says_what_is_true(version, expect):
    """Older than supported -> upgrade; newer than tested -> report what looks wrong (never 'upgrade')."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    from cdlib.commands import env
    info = {"torch": version, "cxx_path": "/usr/bin/g++", "python_h": "/x/Python.h", "tlparse": "/x/tlparse"}
    lines = [p for p in env._problems(info) if "torch " + version in p["problem"]]
    if expect is None:
        assert not lines
    else:
        assert len(lines) == 1 and expect in lines[0]["problem"]
        assert ("upgrade" in lines[0]["fix"]) == version.startswith("2.8")
