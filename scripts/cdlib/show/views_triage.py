"""triage --from-text's Markdown, from its result (decide/triage.py classify_text). The report of a run
of the program is views.py's triage_markdown."""


def from_text_markdown(result):
    err = result["errors"][0]   # the one error the text was classified as
    loc = err["location"]
    md = [f"# Classified: {err['title']} `[{err['category']}]`"]
    warned = result.get("warnings")
    if warned:
        md.append("PyTorch's warnings in the text:")
        md += [f"- {w}" for w in warned]
    if result["exception_parsed"]:
        md.append(f"Exception: **{err['type']}** — {err['message'].splitlines()[0] if err['message'] else ''}"[:400])
    if loc:
        md.append(f"At: {loc['file']}:{loc['line']}" + (f" `{loc['code']}`" if loc["code"] else ""))
    if err["advice"]:
        md.append(f"What to do: {err['advice']}")
    md.append(f"Skill: {err['skill']}")
    if err["next_command"]:
        md.append(f"Next: `{err['next_command']}` (replace <your command> with the program that fails)")
    for b in result["graph_breaks"]:
        md.append(f"- graph break at {b['site']}: {b['gb_id'] or ''} {b['gb_type']} — Fix: {' '.join(b['fix'].get('fix', '').split())}")
    return "\n".join(md)
