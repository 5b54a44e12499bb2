"""Markdown of an accuracy result (decide/accuracy.py builds it): per output the error table against
fp64 and the configs tried; for a script target, what torch's accuracy check measured."""
from ..decide import accuracy_check, accuracy_judge
from . import output


def _fmt(x):
    if x is None:
        return ""
    if isinstance(x, float):
        if x == 0:
            return "0"
        if x != x or x in (float("inf"), float("-inf")):
            return str(x)
        return f"{x:.3g}"
    return str(x)


def _table(entry):
    rows = []
    for r in entry.get("outputs", []):
        rows.append([r["output"], f"{r.get('dtype', '')}{r.get('shape', '')}", _fmt(r.get("max_abs_err")),
                     _fmt(r.get("max_rel_err")), ("allclose" if r.get("allclose") else _fmt(r.get("rmse_ratio")) + (f" (limit {_fmt(r.get('multiplier'))})" if r.get("multiplier") else "")),
                     ("NaN! " if r.get("nan_compiled") and not r.get("nan_eager") else "") + r["verdict"]])
    return output.table(["output", "dtype/shape", "max abs err", "max rel err", "RMSE ratio vs fp64", "verdict"], rows)


def summary_lines(configs):
    """The default config's table and a line per other config tried."""
    default = configs[0] if configs else {}
    lines = []
    if default.get("verdict") == "ERROR":
        return [f"Compiling/running failed: {default.get('error')}"]
    lines.append(_table(default))
    for c in configs[1:]:
        lines.append(f"- with {c['config']}: {c['verdict']}" + (f" ({c.get('error')})" if c.get("error") else ""))
    return lines


def model_md(result):
    if "verdict" not in result:
        return (f"# accuracy: could not evaluate\n\n- {result.get('error')}\n\nNext:\n\n    "
                + result["next_command"])
    verdict = result["verdict"]
    md = [f"# accuracy: {result['target']}: {'PASS' if verdict == 'pass' else verdict}", ""] + summary_lines(result["configs"])
    md += ["", f"**Meaning:** {result['meaning']}"]
    if result.get("note"):
        md.append(f"- note: {result['note']}")
    if verdict == "FAIL" and not result["fixed_by"]:
        md += ["", "Next: find the failing layer with a script that checks the result, e.g.", "",
               "    " + result["next_command"]]
    else:
        md += ["", "Next: see the whole compile (graphs, breaks) with", "", "    " + result["next_command"]]
    return "\n".join(md)


def script_md(result):
    j = result["measured"]
    checked = (f"{j['graphs_checked']} compiled graph(s), {j['outputs_checked']} output(s) checked on their first call "
               f"against eager and fp64 (repro_tolerance {accuracy_check.TOLERANCE:g}: torch's RMSE rule decides)")
    if result["status"] == "fail":
        return "\n".join(_miscompile_md(result))
    if result["status"] == "pass":
        worst = result["worst_output"]
        md = ["# accuracy: every compiled graph passed Inductor's accuracy check", "",
              f"- {checked}: no compiled graph is further from fp64 than eager"
              + (f" (largest ratio: {accuracy_judge.numbers(worst)}, {worst['dtype']})" if worst else ""), "",
              "If results still look wrong, the difference comes from outside the compiled graphs "
              "(graph breaks, random numbers, data order, Python side effects) or only shows on later calls or "
              "after many steps.", "", "Next: compare the whole run's printed output compiled and eager:", "",
              "    " + result["next_command"]]
    elif result["status"] == "precision":
        md = [f"# accuracy: {j['summary']}", "",
              ("- compiled is within rounding of eager: " if result["ulp_band"] else
               "- no compiled graph is less accurate than eager: ") + j["why"],
              f"- then the program failed: {result['error']}",
              f"- gate that fits: {j['gate']}", "",
              f"**Meaning:** {result['meaning']}", "",
              result["next_command"]]
    elif "next_why" not in result:
        md = ["# accuracy: the program passed, but no compiled graph was checked", "",
              "- " + ("no graph was compiled by Inductor (torch's check only measures Inductor graphs)"
                      if not result["inductor_ran"] else "no Inductor graph ran with real inputs under the check"), "",
              "Next: look at the whole run:", "", "    " + result["next_command"]]
    else:
        cmd = result["next_command"]
        md = [f"# accuracy: {j['summary']}", ""]
        if result["error"] and j.get("check_raised") and result["error"] in j.get("why", ""):
            md.append("- the accuracy-check run stopped at that error (inside torch's check)")
        elif (result["error"] or "").startswith("AccuracyError"):
            md.append(f"- torch's check stopped the run at the graph ({result['error']})")
        else:
            md.append(f"- the program failed: {result['error'] or 'exit ' + str(result['exit_code'])}")
        md += [f"- {checked}" if j["graphs_checked"] else "- no graph was compared", "",
               f"Next: {result['next_why']}" + (":" if cmd else "."), ""] + (["    " + cmd] if cmd else [])
    return "\n".join(md)


def _miscompile_md(result):
    j = result["measured"]
    md = [f"# accuracy: {j['summary']}", "", f"- {j['why']}"]
    if result["checkpoint"]:
        if "graph_error" not in result:
            md += ["", f"The failing graph ({result['graph_nodes']} FX nodes) alone, tol {result['tol']:g}:", ""] \
                + summary_lines(result["configs"])
        else:
            md.append(f"- could not re-measure the graph alone: {result['graph_error']}")
        md += ["", f"**Meaning:** {result['meaning']}", f"- graph: {result['checkpoint']}"]
    md += ["", "Next: find the pass/lowering (bisect), or shrink the graph (minify --kind accuracy):", "",
           "    " + result["bisect_command"], "    " + result["next_command"]]
    return md
