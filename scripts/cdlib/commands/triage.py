"""triage: run the program once under TORCH_TRACE and report every graph break, recompile and
error, located in the user's code, classified, with the next step."""
import os
import shlex
import sys

from .. import EXAMPLES_DIR
from ..decide import analyze, runs
from ..cmdline import command_line
from ..decide.triage import classify_text
from ..run import proc, rundir
from ..read import trace
from ..errors import CliError
from ..show.output import emit
from ..show.views import triage_markdown
from ..show.views_triage import from_text_markdown

HELP = "run the program once; report graph breaks, recompiles, errors (the main job)"
ORDER = 10
TAKES_TARGET = True
DESCRIPTION = """Run the target command once, unmodified, with TORCH_TRACE pointed into the run dir,
and report every graph break, recompilation and compile error located in your code, classified,
with the fix and the next command. Without a target it runs the bundled example program."""
EPILOG = """examples:
  compile_debug.py triage -- python train.py --steps 2
  compile_debug.py triage train.py
  compile_debug.py triage --vs-eager -- python eval.py     # compiled vs eager printed output
  compile_debug.py triage --from-text error.log
  pbpaste | compile_debug.py triage --from-text -"""
DEFAULT_EXAMPLE = os.path.join(EXAMPLES_DIR, "toy_train.py")


def add_arguments(p):
    p.add_argument("--timeout", type=float, default=1800, metavar="SEC",
                   help="kill the program (and its process group) after SEC seconds (default 1800)")
    p.add_argument("--from-text", metavar="FILE", help="classify a pasted error/log (FILE or - for stdin); no run")
    p.add_argument("--trace", metavar="DIR_OR_FILE", help="analyze an existing TORCH_TRACE dir/file; no run")
    p.add_argument("--no-tlparse", action="store_true", help="skip tlparse's HTML report")
    p.add_argument("--keep-output", action="store_true", help="keep all of the program's output in the run dir "
                   f"(default: of a huge output, the first {proc.OUTPUT_HEAD >> 20} MiB and the last "
                   f"{proc.OUTPUT_TAIL >> 20} MiB, with a note)")
    p.add_argument("--no-eager-check", action="store_true",
                   help="when the compiled run fails, do not re-run it once without torch.compile to tell a "
                        "bug in your program from a compiler problem (the re-run costs one more run of the "
                        "program, only after a failure)")
    p.add_argument("--vs-eager", action="store_true",
                   help="also run the program once without torch.compile, even when it passes, and compare what "
                        "both print line by line (numbers within the compiled graphs' dtype rounding): finds "
                        "silent differences (hooks not called, different numbers) that exit codes hide")
    p.add_argument("--nproc", type=int, metavar="N", help="run the script under torchrun with N ranks; "
                   "per-rank reports and what differs between ranks (docs/multirank.md); with --trace DIR: "
                   "compare the ranks of a recorded multi-rank trace")
    p.add_argument("--torchrun-args", metavar='"ARGS"', help='extra torchrun options (with --nproc), one quoted '
                   'string, e.g. "--master-port 29555"; a lone flag needs =: --torchrun-args=--flag')


def run(args):
    if not args.timeout > 0 or args.timeout == float("inf"):
        raise CliError(f"--timeout must be positive and finite (seconds), not {args.timeout:g}")
    if args.target and args.nproc is None and not args.trace and not args.from_text:
        from ..run.multirank_launch import torchrun_target
        launch = torchrun_target(args.target)
        if launch:   # the user's own torchrun command: run the same job as --nproc N (every rank watched)
            args.nproc, extra, args.target = launch
            if extra:
                args.torchrun_args = " ".join(filter(None, [args.torchrun_args, shlex.join(extra)]))
            proc.progress(f"a torchrun command: running it as triage --nproc {args.nproc}"
                          + (f' --torchrun-args "{args.torchrun_args}"' if args.torchrun_args else "")
                          + f" -- {shlex.join(args.target)}")
    proc.KEEP_OUTPUT = args.keep_output
    if args.vs_eager and (args.nproc is not None or args.from_text or args.trace or args.no_eager_check):
        raise CliError("--vs-eager runs the program once more without torch.compile; it does not combine with "
                       "--nproc, --from-text, --trace or --no-eager-check")
    if args.nproc is not None or args.torchrun_args is not None:
        return _multirank(args)
    if args.from_text:
        return _from_text(args)
    if args.trace:
        if args.target:
            raise CliError("--trace analyzes an existing trace; do not also give a target command")
        if not os.path.exists(args.trace):
            raise CliError(f"{args.trace}: no such file or directory")
        _check_trace(args.trace)
        ranks = trace.parse(args.trace).ranks
        if len(ranks) > 1:  # a multi-rank trace: compare the ranks instead of merging them
            from ._triage_recorded import analyze_recorded
            result, md = analyze_recorded(args, nproc=max(ranks) + 1, trace_path=args.trace)
            emit(args, result, md)
            return 0
        run_dir = rundir.make(args.out, "triage")
        rep = analyze.analyze(args.trace, run_dir=run_dir)
        rep.artifacts["trace_dir"] = os.path.abspath(args.trace)
        return _emit(args, rep, None)
    target = args.target or [sys.executable, DEFAULT_EXAMPLE]
    argv = proc.resolve_target(target)
    run_dir = rundir.make(args.out, "triage")
    tstr = command_line(argv)
    proc.progress(f"running {tstr} (timeout {args.timeout:.0f} s); artifacts in {run_dir}")
    rep = runs.run_and_analyze(argv, run_dir, timeout=args.timeout, tlparse=not args.no_tlparse,
                                  eager_check=not args.no_eager_check, vs_eager=args.vs_eager, keep_on_interrupt=True)
    _emit(args, rep, tstr)
    if rep.interrupted:  # Ctrl-C: the report of what it did is written; exit as interrupted (130)
        raise KeyboardInterrupt(f"what it did in {rep.duration_s or 0:.0f} s: {os.path.join(run_dir, 'report.md')}")
    return 0


def _multirank(args):
    from ._triage_nproc import run_triage
    from ._triage_recorded import analyze_recorded
    if args.nproc is None:
        raise CliError("--torchrun-args needs --nproc N")
    if args.trace:  # compare the ranks of a recorded multi-rank trace
        if args.target or args.torchrun_args is not None:
            raise CliError("--nproc N --trace DIR compares a recorded trace; do not also give a target or --torchrun-args")
        result, md = analyze_recorded(args, nproc=args.nproc, trace_path=args.trace)
        emit(args, result, md)
        return 0
    if args.from_text:
        raise CliError("--nproc runs a script under torchrun; it does not combine with --from-text")
    result, md = run_triage(args, nproc=args.nproc, torchrun_args=args.torchrun_args,
                            target=args.target, timeout=args.timeout, tlparse=not args.no_tlparse)
    emit(args, result, md)
    if result.get("interrupted"):
        raise KeyboardInterrupt(f"what the ranks did in {result['duration_s']:.0f} s: "
                                f"{os.path.join(result['run_dir'], 'report.md')}")
    return 0


def _emit(args, rep, tstr):
    result = rep.to_dict()
    result["status"] = rep.status
    result["target"] = tstr
    emit(args, result, triage_markdown(rep, tstr))
    return 0


def _from_text(args):
    if args.target:
        raise CliError("--from-text classifies text; do not also give a target command")
    if args.from_text == "-":
        text = _as_text(sys.stdin.buffer.read(), "stdin")
    else:
        if os.path.isdir(args.from_text):
            raise CliError(f"{args.from_text}: is a directory; give a text file (or - for stdin)")
        if not os.path.isfile(args.from_text):
            raise CliError(f"{args.from_text}: no such file")
        try:
            with open(args.from_text, "rb") as f:
                data = f.read(TEXT_LIMIT + 1)
        except OSError as e:
            raise CliError(f"{args.from_text}: cannot read ({e.strerror})")
        text = _as_text(data, args.from_text)
    if not text.strip():
        raise CliError("no text to classify (empty input)")
    result = classify_text(text)
    emit(args, result, from_text_markdown(result))
    return 0


TEXT_LIMIT = 20 << 20   # --from-text reads at most this much (the end of a longer log is what matters)


def _as_text(data, name):
    """Decode pasted text; refuse binary data (NUL bytes, or mostly undecodable/control bytes)."""
    if len(data) > TEXT_LIMIT:
        data = data[-TEXT_LIMIT:]
    sample = data[:65536]
    text = sample.decode("utf-8", "replace")
    ctrl = sum(1 for c in text if ord(c) < 32 and c not in "\t\n\r\f\x1b")
    bad = text.count("\ufffd")   # a latin-1 log has a few of these; binary data is mostly made of them
    if b"\0" in sample or (text and (ctrl / len(text) > 0.05 or bad / len(text) > 0.3)):
        raise CliError(f"{name}: binary data, not text; give the error message or log as text")
    return data.decode("utf-8", "replace")


def _check_trace(path):
    """A dir/file given to --trace must hold TORCH_TRACE data; say so in one line when it does not."""
    files = trace.trace_files(path)
    if not files:
        raise CliError(f"{path}: no TORCH_TRACE file found (looked for *.log files and files whose first line "
                       "is a trace line like `V1123 00:27:19.270000 123 torch/_dynamo/...py:42] {...}`)")
    if not any(os.path.getsize(f) for f in files):
        raise CliError(f"{path}: the trace file(s) are empty ({len(files)} file(s)); torch.compile logged nothing")
    if os.path.isfile(path) and not trace.looks_like_trace(path):
        raise CliError(f"{path}: not a TORCH_TRACE file (its first line is not a trace line); "
                       "for a pasted error or log use --from-text")
