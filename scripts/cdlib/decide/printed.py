"""What a run printed, read for comparison: numbers and times masked, the program's own lines (torch's log
records, warnings and pytest's summary left out), its last lines before a traceback, PyTorch's warnings with
their triage rows, and compiled vs eager output compared number by number (triage --vs-eager, compare).
No torch import."""
import re

from ..cmdline import clip
from ..read.frames import WARNING_HEAD, drop_multiline_warnings


# a number; not part of a name (layer1, model__0) or of a hex address (masked first)
_NUM_RE = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])|(?<![\w.])[-+]?(?:nan|inf)(?!\w)")
_TIME_RE = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?\s?(?:s|ms|us|µs|ns|sec|secs|seconds|"
                      r"min|it/s|s/it|\w+/s)(?:/[A-Za-z_]+)?(?![\w/])")   # a rate per unit: 953.2 ms/batch
_HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
# a wall-clock stamp: logging's "2026-11-25 08:04:37,787", ISO "2026-11-25T08:04:37.787Z", a bare
# "08:04:37", glog's "I1125 08:04:37.787000 1308" (with the process id)
_STAMP_RE = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?Z?|^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+ +\d+|"
                       r"(?<![\d:])\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?![\d:])")


def mask_times(line):
    """A printed line with its clock stamps, timings (1.2 s, 30 it/s, 48134 tokens/s) and hex addresses
    masked: they differ between any two runs of the same program."""
    return _HEX_RE.sub("0x?", _TIME_RE.sub("<time>", _STAMP_RE.sub("<time>", line.rstrip())))
_COARSEST = ("bf16", "f16", "f32", "f64")
_EPS = {"bf16": 2.0 ** -7, "f16": 2.0 ** -10, "f32": 2.0 ** -23, "f64": 2.0 ** -52}
_NAMES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64"}


# a line of timings whose unit is a word apart from the numbers ("first 5 latencies (ms): [13514.2, 33.0]", "p50=29.0ms
# p99=65.3ms"), with no value of the model's on it: its numbers differ between any two runs (blind A/B batch 59: a
# latency list read as "outputs differ", which sent the report to an accuracy run and a Dynamo-alone run)
# (a timing word: a unit alone, "(ms)" or "wall", is not one: "wall shear stress (Pa)", "onsets (ms)" are values; review)
TIMING_WORDS = r"latenc|throughput|\bp(?:50|9\d)\b"   # (verdict.timing_failure adds a failing check's own words)
_TIMING_LINE = re.compile(r"(?i)" + TIMING_WORDS + r"|elapsed")
_VALUE_WORD = re.compile(r"(?i)loss|acc|err|diff|logit|prob|score|norm|grad|nll|ppl|\bmae\b|mse|\bf1\b|auc|bleu|"
                         r"\bmean\b|\bstd\b|\bmax\b|\bmin\b|pred|output|value")


def _template(line):
    """(line with numbers as '#', [number tokens]); clock stamps, timings and hex addresses masked, and every number
    of a timing line (_TIMING_LINE, no value word)."""
    s = mask_times(line)
    if _TIMING_LINE.search(s) and not _VALUE_WORD.search(_NUM_RE.sub("", s)):
        return _NUM_RE.sub("<time>", s), []
    return _NUM_RE.sub("#", s), _NUM_RE.findall(s)


def _unit(tok):
    """One unit in the last printed digit of a number token (0 for an integer)."""
    t = tok.lstrip("+-").lower()
    mant, _, exp = t.partition("e")
    if "." not in mant and not exp:
        return 0.0
    dec = len(mant.split(".", 1)[1]) if "." in mant else 0
    return 10.0 ** (int(exp or 0) - dec)


def _close(a, b, rtol):
    if a == b:
        return True
    if _unit(a) == 0.0 and _unit(b) == 0.0:      # integers (counts, steps, shapes): exactly
        return False
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if x != x or y != y or x in (float("inf"), float("-inf")) or y in (float("inf"), float("-inf")):
        return False
    return abs(x - y) <= rtol * max(abs(x), abs(y)) + max(_unit(a), _unit(b))


# stderr lines that are torch's or Python's, not the program's own (compiled runs print more of them)
# (torchrun prefixes each rank's lines, `[rank1]:W1202 09:19:54.16 25065 torch/utils/...]`: blind A/B batch 23's
# compare said "output changed" for rank 1 from such a line's pid)
_NOT_PROGRAM = re.compile(r"^(?:\[(?:default)?rank\d+\]:)?\[?[VIWEC]\d{4} \d{2}:\d{2}|site-packages/|/torch/|^\s+warnings\.warn\(|Warning: |"
                          r"^\s*(?:File \"|Traceback \(most recent call last\))|^\[compile-debug")

# the unindented lines of a multi-line torch exception message after its first line (Dynamo's Unsupported)
_EXC_TAIL = re.compile(r"(?:from user code:|For more details about this graph break|Set TORCHDYNAMO_VERBOSE=1|"
                       r"You can suppress this exception|Developer debug context|User Stack \(most recent call last\)|"
                       r"For (?:C\+\+ stack trace|more information|extended logs|more debugging help)|"
                       r"If you suspect the guard|Caused by: |The above exception was the direct cause|"
                       r"During handling of the above exception|consider using data-dependent friendly APIs)")
_TORCH_EXC_LINE = re.compile(r"^torch\.[\w.]*\.[A-Z]\w*: ")


def printed(stdout, stderr):
    """What the program printed: its stdout, then its own stderr lines (logging writes there by default),
    prefixed "[stderr] "; torch's log lines, warnings (with the rest of a multi-line message, up to the
    indented source line that ends it) and tracebacks on stderr are left out."""
    err, in_tb, in_exc, in_warning, tb_warning = [], False, False, 0, False
    for ln in drop_multiline_warnings((stderr or "").splitlines()):
        if in_warning and tb_warning:   # a message that carries an indented traceback (anomaly mode's "Error
            if ln[:1].isspace():        # detected in IndexPutBackward0. Traceback of forward call ..."): all of
                continue                # its indented lines, up to the first line that is not indented
            in_warning = 0
        elif in_warning:
            in_warning -= 1
            if ln.startswith("  "):          # the source line: the warning ends here
                in_warning = 0
            continue
        if WARNING_HEAD.match(ln):
            in_warning, tb_warning = 30, "Traceback" in ln
            continue
        if ln.startswith("Traceback (most recent call last)"):
            in_tb, in_exc = True, False
        elif in_tb and not ln[:1].isspace():   # the exception line ends the traceback
            in_tb, in_exc = False, True
            continue
        elif in_exc and (not ln.strip() or ln[:1].isspace() or _EXC_TAIL.match(ln)):
            continue      # the rest of the exception's message (torch's "  Explanation:", "  Hint:", "from user code:")
        elif _TORCH_EXC_LINE.match(ln):   # torch's exception printed without a traceback header (Dynamo's chained ones)
            in_exc = True
            continue
        in_exc = False
        if not in_tb and ln.strip() and not _NOT_PROGRAM.search(ln) and not _TORCH_LOG_RECORD.match(ln):
            err.append(f"[stderr] {ln}")
    out, in_summary = [], False
    for ln in (stdout or "").splitlines():
        # pytest's "warnings summary" section lists the warnings a run raised: a compiled run raises torch's own
        # (Inductor, CUDA), the eager run none; it ends at its "-- Docs: ..." line
        if _PYTEST_WARNINGS.match(ln):
            in_summary = True
        elif in_summary and ln.startswith("-- Docs: "):
            in_summary = False
        elif not in_summary and not _TORCH_LOG_RECORD.match(ln):
            # and its count in pytest's last line ("1 failed, 1 warning in 62.71s (0:01:02)"), with the clock
            # form pytest adds past a minute (a compiled run takes longer: seen on torch 2.11)
            out.append(re.sub(r", \d+ warnings?\b| \(\d+:\d\d:\d\d\)", "", ln) if _PYTEST_TOTALS.match(ln) else ln)
    return "\n".join(out + err)


_PYTEST_WARNINGS = re.compile(r"^=+ warnings summary =+$")
_PYTEST_TOTALS = re.compile(r"^=*\s*\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?)\b.* in [\d.]+s")


# torch's own log records as pytest's log capture prints them in a failing test's report (`DEBUG    torch.<name>:
# _internal.py:1390`): hundreds of lines with TORCH_TRACE on, none in the eager run (blind A/B batch 23's CI gate:
# --vs-eager called that "the compiled numbers differ" and offered the accuracy check)
# torch's glog lines and pytest's headers above captured output go with them (compiled runs have more of both)
_TORCH_LOG_RECORD = re.compile(r"^(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+torch(?:\.[\w.]*)?:\S*:\d+\b"
                               r"|(?:\[(?:default)?rank\d+\]:)?[VIWEC]\d{4} \d{2}:\d{2}:[\d.]+ +\d+ \S*torch/"
                               r"|-{5,} Captured (?:stdout|stderr|log) (?:setup|call|teardown) -{5,}$)")


_TRACEBACK = "Traceback (most recent call last)"
_CHAINED = ("The above exception was the direct cause", "During handling of the above exception")


def _before_final_traceback(stderr, error_line):
    """stderr up to the traceback (with the ones chained to it) that ends in the run's error: what follows
    is torch's error text, shown under Errors. Unchanged when that error is not after the last traceback (a
    traceback the program logged, then its own failure line)."""
    i = stderr.rfind(_TRACEBACK)
    exc = next((ln for ln in stderr[i:].splitlines()[1:] if ln.strip() and not ln[:1].isspace()), "") if i >= 0 else ""
    if i < 0 or not error_line or error_line not in exc:   # the last traceback is not the one of this error
        return stderr
    while True:
        prev = stderr[:i].rstrip().splitlines()
        j = stderr.rfind(_TRACEBACK, 0, i)
        if not (prev and prev[-1].strip().startswith(_CHAINED)) or j < 0:
            return stderr[:i]
        i = j


def _last_cr(text):
    """Each line as a terminal shows it: the last \\r-segment (a progress bar redraws one line)."""
    return "\n".join(ln.split("\r")[-1] for ln in (text or "").split("\n"))


def tail(stdout, stderr, error_line=None, n=6, width=200):
    """The last lines the program printed, as a reader of a report should see them: its stdout's last
    lines, then its own stderr's last ones (logging; at most 2 when stdout has lines), each clipped to
    width, and how many lines it printed in all. error_line: the run's error (its first line), whose
    traceback and torch's text after it are left out."""
    err = _before_final_traceback(stderr or "", (error_line or "").strip())
    lines = [ln.rstrip() for ln in printed(_last_cr(stdout), _last_cr(err)).splitlines() if ln.strip()]
    out_l = [ln for ln in lines if not ln.startswith("[stderr] ")]
    err_l = [ln for ln in lines if ln.startswith("[stderr] ")]
    k_err = min(len(err_l), 2 if out_l else n)
    k_out = min(len(out_l), n - k_err)
    k_err = min(len(err_l), n - k_out)
    sel = (out_l[-k_out:] if k_out else []) + (err_l[-k_err:] if k_err else [])
    return [ln if len(ln) <= width else ln[:width - 1] + "…" for ln in sel], len(lines)


# a Python warning raised from torch's own files: installed (site/dist-packages) or a source tree's package dirs
_TORCH_WARNING = re.compile(r"(?:(?:site|dist)-packages/torch/\S+|/torch/(?:_\w+|nn|utils|optim|fx|library|"
                            r"autograd|cuda|distributed|export|amp|backends)/\S+)\.py:\d+: (\w*Warning): (.+)$")


_PY_WARNING = re.compile(r"^\S+\.py:\d+: (\w*Warning): (.+)$", re.M)


def torch_warnings(text, limit=5, glog=True):
    """PyTorch's warning lines in a log, each once: Python warnings raised from torch's files
    (`.../torch/...py:N: UserWarning: ...`) and, with glog, torch's glog-style lines (`W1126 ...
    torch/...py:N] ...`: a live run's report already covers those, its recompiles and graph breaks)."""
    out = []
    for ln in text.splitlines():
        m = _TORCH_WARNING.search(ln) or \
            (glog and re.match(r"\s*[WE]\d{4} [\d:.]+ \d+ torch/\S+\] (.+)$", ln))
        if m:
            w = clip(": ".join(m.groups()).strip(), 300)
            if w not in out:
                out.append(w)
        if len(out) == limit:
            break
    return out


def warnings_with_rows(stderr, limit=5):
    """PyTorch's Python warnings in a run's stderr, each once, with the triage row that explains one
    (knowledge/triage.yaml rows marked `warning: true`): [{warning, row, title, advice}]."""
    from . import knowledge
    out = []

    def row_of(w):
        return next((r for r in knowledge.triage_rows() if r.get("warning")
                     and any(re.search(p, w) for p in r.get("patterns") or [])), None)
    found = [(w, row_of(w), "torch") for w in torch_warnings(stderr or "", limit=50, glog=False)]
    # the program's own warnings that quote a torch error a row explains (blind A/B batch 23: a fallback helper
    # warned "compiled f failed (torch.compile with fullgraph=True found no compiled frames...); running eagerly")
    for m in _PY_WARNING.finditer(stderr or ""):
        w = clip(": ".join(m.groups()).strip(), 300)
        row = row_of(w)
        if not _TORCH_WARNING.search(m.group(0)) and row and all(row is not r for _, r, _ in found):
            found.append((w, row, "program"))
    for w, row, by in found:
        out.append({"warning": w, "row": row and row["id"], "title": row and row["title"], "by": by,
                    "advice": row and " ".join((row.get("advice") or "").split())})
    return sorted(out, key=lambda w: w["row"] is None)[:limit]   # the explained ones first


_NONFINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|infinity)(?![\w.])", re.I)


def compare_outputs(compiled, eager, dtypes=(), show=5):
    """Compare two programs' stdout line by line: the text must be identical, numbers may differ by the
    rounding of the compiled graphs' coarsest dtype (rtol = sqrt(eps), plus one unit in the last printed
    digit); clock stamps, timings and hex addresses are masked. -> dict(differ, lines {compiled, eager}, dtype, rtol,
    first [{compiled_line, eager_line, compiled, eager, why}], verdict)."""
    import difflib
    dt = next((d for d in _COARSEST if d in set(dtypes)), "f32")
    rtol = _EPS[dt] ** 0.5
    c_lines, e_lines = compiled.splitlines(), eager.splitlines()
    ct, et = [_template(x) for x in c_lines], [_template(x) for x in e_lines]
    diffs = []
    sm = difflib.SequenceMatcher(None, [t for t, _ in ct], [t for t, _ in et], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            for i, j in zip(range(i1, i2), range(j1, j2)):
                (ta, na), (tb, nb) = ct[i], et[j]
                bad = next(((a, b) for a, b in zip(na, nb) if not _close(a, b, rtol)), None)
                if ta != tb:
                    diffs.append((i, j, "text differs"))
                elif bad:
                    diffs.append((i, j, f"{bad[0]} vs {bad[1]}" + ("" if _unit(bad[0]) == _unit(bad[1]) == 0.0
                                                                   else f" (beyond rtol {rtol:.2g})")))
            continue
        diffs += [(i, None, "only compiled") for i in range(i1, i2)]
        diffs += [(None, j, "only eager") for j in range(j1, j2)]
    first = [{"compiled_line": i + 1 if i is not None else None, "eager_line": j + 1 if j is not None else None,
              "compiled": c_lines[i][:300] if i is not None else None, "eager": e_lines[j][:300] if j is not None else None,
              "why": why} for i, j, why in diffs[:show]]
    n = len(diffs)
    # NaN or inf printed only compiled is the signal to follow, whatever number differs first (blind A/B batch 21:
    # "first at line 1: 2.5037 vs 2.4927", dropout's random numbers, above "grad_norm nan" on the same line)
    nonfinite = None
    if not any(_NONFINITE.search(x) for x in e_lines):
        # (on a line eager printed too: a line only the compiled run printed, after eager stopped, is not it; review)
        nonfinite = next(({"compiled_line": i + 1, "compiled": c_lines[i][:300]} for i, j, _ in diffs
                          if i is not None and j is not None and _NONFINITE.search(c_lines[i])), None)
    if not c_lines and not e_lines:
        verdict = "nothing to compare: the program printed nothing (stdout, or its own lines on stderr) in either run"
    elif not n:
        verdict = (f"compiled and eager print the same output ({len(c_lines)} line(s); numbers within rtol {rtol:.2g}, "
                   f"√eps of {_NAMES[dt]})")
    else:
        f = first[0]
        at = f"line {f['compiled_line']}" if f["compiled_line"] else f"eager line {f['eager_line']}"
        verdict = (f"outputs differ at {n} line(s) (compiled {len(c_lines)}, eager {len(e_lines)}); first at {at}: "
                   f"{f['why']}")
        if nonfinite:
            verdict = (f"compiled prints NaN/inf (line {nonfinite['compiled_line']}: "
                       f"`{nonfinite['compiled'].strip()[:120]}`), eager none; " + verdict)
    # relative size of each numeric difference, in order: a small first one that grows is rounding compounded over
    # steps (blind A/B batch 36: a chaotic training run, 1.4e-3 at step 5, 0.15 at step 10)
    rels = [abs(a - b) / max(abs(a), abs(b)) for _, _, why in diffs
            for m in [re.match(r"(-?[\d.]+(?:e[-+]?\d+)?) vs (-?[\d.]+(?:e[-+]?\d+)?)", why)] if m
            for a, b in [(float(m.group(1)), float(m.group(2)))] if max(abs(a), abs(b)) > 0]
    return {"differ": n, "lines": {"compiled": len(c_lines), "eager": len(e_lines)}, "dtype": _NAMES[dt],
            "rtol": rtol, "first": first, "verdict": verdict, "nonfinite": nonfinite,
            "grows": bool(rels) and len(rels) >= 2 and rels[0] < 1e-2 and max(rels) > 10 * rels[0]}


# an absolute difference right after "diff"/"difference": "max abs diff vs eager: 8.358e-01", "max|diff|=1.9e-06".
# Not "different"/"diffusion", not an error rate or a delta time, not a value with a unit after it (1.2s, 12.5%,
# 0.17 ppm), not a line about relative differences (review of batch 20)
_DIFF_VALUE = re.compile(r"(?i)(?:\bdiff(?:erence)?\b[^\d\n-]{0,30}?|"
                         # `max |out - eager| = 2.7e+00` (blind A/B batch 36: an absolute difference written as |a - b|)
                         r"\|\s?[A-Za-z_][\w.()\[\]]{0,30}\s?-\s?[A-Za-z_][\w.()\[\]]{0,30}\s?\|\s*[=:]?\s*)"
                         r"\[?(-?\d*\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+)(?![\w%])")
_RELATIVE = re.compile(r"(?i)\brel(?:ative)?\b|%|\bppm\b")


_NUM = r"-?\d*\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+"
_EAGER_AT = re.compile(r"(?i)\beager\b[ \t]*[=:]?[ \t]*(" + _NUM + r")(?![\w%.])")
_COMPILED_AT = re.compile(r"(?i)\b(?:compiled?|comp)\b[ \t]*[=:]?[ \t]*(" + _NUM + r")(?![\w%.])")
_COLUMN = re.compile(r"(?i)^(?:eager|compiled?|comp)$")
_NOT_VALUES = re.compile(r"(?i)speed|\btimes?\b|timing|latency|throughput|<time>|warm-?up|elapsed|duration|runtime|"
                         r"\bwall\b|\bsecs?\b|\bms\b|/s\b|/iter|\bit/|\bmem|\b[KMG]i?B\b|\bfps\b|flops|bench")


def _paired_differences(lines):
    """|eager - compiled| of values a program printed side by side: on one line (`recall eager=0.062
    compiled=0.031`), or in a table whose header names eager and compiled columns and whose rows align under
    them (blind A/B batch 22: `train eager   train comp` per epoch; the check said "rounding" of a 6%
    difference, as no single difference value was printed). Timings are not values."""
    out, cols, width, timed = [], None, None, False
    for raw in lines or []:
        ln = mask_times(raw)
        nv = bool(_NOT_VALUES.search(ln))   # a timing line, or the title of a table of timings (`latency (ms):`)
        was_timed, timed = timed, nv and not re.search(r"\d", raw)
        if nv:
            cols = None
            continue
        e, c = _EAGER_AT.findall(ln), _COMPILED_AT.findall(ln)
        out += [abs(float(a) - float(b)) for a, b in zip(e, c)]
        toks = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", ln)]
        named = [(a, b, t.lower()) for a, b, t in toks if _COLUMN.match(t)]
        if not re.search(r"\d", ln) and any(t == "eager" for *_, t in named) and any(t != "eager" for *_, t in named):
            cols, width = (None if was_timed else named), None   # a header: the eager and compiled columns
            continue
        if cols is None:
            continue
        nums = [(a, b, t) for a, b, t in toks if re.fullmatch(_NUM, t, re.I)]
        if not nums or (width is not None and len(toks) != width):   # the table ended (another kind of line)
            cols = None
            continue
        width = len(toks)
        under = []
        for a, b, name in cols:   # the number whose span overlaps the header word (right- or left-aligned)
            hit = [float(t) for x, y, t in nums if x < b and a < y]
            under.append((name, hit[0] if len(hit) == 1 else None))
        for i, (name, v) in enumerate(under):
            if name == "eager" and v is not None:
                nxt = next(((n, w) for n, w in under[i + 1:] if n != "eager"), None)
                if nxt and nxt[1] is not None:
                    out.append(abs(v - nxt[1]))
    return out


def printed_difference(lines):
    """The largest absolute difference a program printed (with a decimal point or an exponent: counts such as
    17/160 are not differences), or between the eager and compiled values it printed side by side; None when
    it printed none."""
    vals = [abs(float(x)) for ln in lines or [] if not _RELATIVE.search(ln) for x in _DIFF_VALUE.findall(ln)]
    vals += _paired_differences(lines)
    return max(vals) if vals else None
