"""Behaviours our skills and knowledge state, measured on the installed torch (one probe process:
tests/programs/claims_probe.py). Each assertion names the text that depends on it, so a change in
torch (or in our text) fails here first."""
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, program


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    out = tmp_path_factory.mktemp("claims")
    p = subprocess.run([sys.executable, program("claims_probe.py"), str(out)], capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def read(rel):
    return open(os.path.join(ROOT, rel), encoding="utf-8").read()


def test_suppress_errors_env_any_value_turns_it_on(facts):
    # skills/overview/references/logging.md: "Any non-empty value turns it on, `0` included"
    assert facts["config"]["suppress"] is True
    assert "`0` included" in read("skills/overview/references/logging.md")


def test_inductor_defaults_named_in_references(facts):
    # logs-and-debug-dir.md: unique names are the default; graph partition is on by default
    assert facts["config"]["unique"] is True
    assert facts["config"]["partition"] is True
    assert facts["config"]["descr"] == "original_aten"
    text = read("skills/trace-inductor/references/logs-and-debug-dir.md")
    assert "already on by default" in text and "descriptive_names" in text


def test_torch_logs_out_copies_and_keeps_stderr(facts):
    assert facts["logs_out"] == {"file_has": True, "stderr_has": True}
    for rel in ("skills/overview/SKILL.md", "skills/overview/references/logging.md",
                "skills/trace-aot/references/aot-logs-and-knobs.md",
                "skills/trace-inductor/references/logs-and-debug-dir.md"):
        assert "sends it to a file" not in read(rel) and "sends logs to a file" not in read(rel), rel


def test_compile_disable_breaks_fullgraph_but_force_eager_does_not(facts):
    # overview SKILL.md / logging.md caveat; triage's eager re-check uses force_eager for this reason
    assert facts["compile_disable_fullgraph"]["rc"] != 0
    assert facts["compile_disable_fullgraph"]["no_compiled_frames"]
    assert facts["force_eager_fullgraph"]["rc"] == 0
    assert "found no compiled frames" in read("skills/overview/SKILL.md")


def test_joint_graph_artifacts_only_for_inference(facts):
    aot = facts["aot"]
    assert aot["infer"]["before_joint"] and aot["infer"]["after_joint"]
    assert not aot["train"]["before_joint"] and not aot["train"]["after_joint"]
    assert "inference graphs only" in read("skills/trace-aot/references/aot-logs-and-knobs.md")


def test_aot_output_comments_are_in_trace_not_logs(facts):
    tr = facts["aot"]["train"]
    assert tr["logs_have_graph"], "TORCH_LOGS=aot_graphs printed no graph"
    # the trace always has them; the aot_graphs log only on some code paths (cache result printing)
    assert tr["trace_has_return_comments"] and facts["aot"]["infer"]["trace_has_return_comments"]
    assert not (tr["logs_have_return_comments"] and facts["aot"]["infer"]["logs_have_return_comments"])
    assert "not reliably" in read("skills/trace-aot/references/aot-logs-and-knobs.md")


def test_recompile_limit_counts_cached_graphs(facts):
    # trace-dynamo SKILL.md: "the first compile plus 7 recompiles"
    limit = facts["config"]["recompile_limit"]
    assert facts["recompiles"]["limit_graphs"] == limit == 8
    assert "first compile plus 7 recompiles" in read("skills/trace-dynamo/SKILL.md")


def test_ints_are_not_specialized_per_value_under_defaults(facts):
    # knowledge/recompiles.yaml python_int: automatic dynamic makes a changing int dynamic after one recompile
    assert facts["config"]["specialize_int"] is False and facts["config"]["automatic_dynamic"] is True
    assert facts["recompiles"]["int_compiles"] == 2


def test_a_dict_read_by_names_guards_no_key_order(facts):
    # knowledge/recompiles.yaml dict_keys: "`sorted(d.items())` inside the compiled function does not help" and
    # "`[d[k] for k in self.names]` guards no order" (blind A/B batch 42: feature stores merged as they finished)
    g = facts["recompiles"]["graphs"]
    assert (g["by_names"], g["by_items"]) == (1, 3), g
    text = " ".join(read("knowledge/recompiles.yaml").split())
    assert "`sorted(d.items())` inside the compiled function does not help" in text
    assert "`[d[k] for k in self.names]` guards no order" in text


def test_a_growing_buffer_stays_static_unless_the_flag_is_off(facts):
    # knowledge/recompiles.yaml module_buffer_shape: "dynamic=True and mark_dynamic do not apply to them" and "set
    # force_parameter_static_shapes = False" (blind A/B batch 42: a KV cache buffer grown with torch.cat)
    g = facts["recompiles"]["graphs"]
    assert g["buffer_static_True"] == 6 and g["buffer_static_False"] <= 3, g
    assert "set force_parameter_static_shapes = False" in " ".join(read("knowledge/recompiles.yaml").split())


def test_a_size_one_batch_breaks_a_ranged_mark_dynamic_only(facts):
    # knowledge/triage.yaml mark_dynamic_specialized: "a mark_dynamic with min/max rejects" a size-1 dim; "mark
    # without a range (mark_dynamic(x, 0): sizes 0/1 then just recompile), or maybe_mark_dynamic" (blind A/B batch
    # 43: a 705-row test split's last batch of one row under mark_dynamic(..., min=2, max=64))
    assert facts["recompiles"]["size_one"] == {"range": "ConstraintViolationError", "no_range": "ok", "maybe": "ok"}
    text = " ".join(read("knowledge/triage.yaml").split())
    assert "mark_dynamic with min/max rejects" in text and "(mark_dynamic(x, 0): sizes 0/1 then just recompile)" in text


def test_a_class_built_per_call_is_a_new_type_each_time(facts):
    # knowledge/recompiles.yaml type: "A class created inside a function (namedtuple(...), ...) is a new type on every
    # call even with the same name: define it once at module level" (blind A/B batch 43: a reranker's options)
    g = facts["recompiles"]["graphs"]
    assert (g["namedtuple_per_call"], g["namedtuple_module"]) == (3, 1), g
    assert "is a new type on every call even with the same name" in " ".join(read("knowledge/recompiles.yaml").split())
