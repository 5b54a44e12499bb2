"""The one report model of a target run. decide/analyze.py fills it from the structured trace and the
captured output; views (Markdown, JSON) read it. Plain dataclasses, JSON via to_dict()."""
import dataclasses
from dataclasses import dataclass, field


@dataclass
class Location:
    file: str
    line: int | None = None
    function: str | None = None
    code: str | None = None
    display: str | None = None     # short path: "transformers/models/bert/modeling_bert.py", or relative to the cwd
    user: bool | None = None       # the user's own code (not an installed package / torch / stdlib)

    def short(self):
        s = f"{self.file}:{self.line}" if self.line else self.file
        return s


@dataclass
class GraphBreak:
    site: str                      # "file:line" where Dynamo broke the graph
    gb_id: str | None              # graph-break registry id, e.g. "GB0059" (None on old torch for some)
    gb_type: str                   # registry title, e.g. "Failed to trace builtin operator"
    category: str                  # our class from knowledge/graph_breaks.yaml, e.g. "print/logging"
    location: Location             # innermost frame in the user's own code
    explanation: str = ""
    hints: list = field(default_factory=list)
    count: int = 0                 # times hit while compiling
    frames: list = field(default_factory=list)   # compile ids of the frames it split, e.g. ["0/0"]
    fix: dict = field(default_factory=dict)      # recipe from knowledge/graph_breaks.yaml
    user_stack: list = field(default_factory=list)  # [Location], outermost first (user frames only)
    stack: list = field(default_factory=list)       # [Location] from the user's line to the break, outermost first
    in_library: bool = False       # the break site is not in the user's code
    library: str | None = None     # top-level package of the break site, e.g. "transformers"
    workarounds: list = field(default_factory=list)  # [{source, text, code?, label?}] in order: torch's hints first

    def inside_library(self):
        """" (inside transformers: models/x.py:1175)" for a break inside a library, else "" (triage's Next, perf)."""
        return f" (inside {self.library}: {self.stack[-1].display}:{self.stack[-1].line})" \
            if self.in_library and self.stack else ""


@dataclass
class GuardFailure:
    compile_id: str                # the cache entry whose guard failed, e.g. "0/1"
    guard: str                     # the guard expression, e.g. "tensor 'x' size mismatch at index 0. expected 2, actual 3"
    kind: str                      # our class from knowledge/recompiles.yaml, e.g. "shape"
    location: Location | None = None   # user line that installed the guard (torch >= 2.11)
    hint: str | None = None            # torch's own HINT text, when it gave one
    stack: list = field(default_factory=list)   # [Location] chain to the line that installed the guard
    cause: str = ""                    # what changed, e.g. "shape of `tokens` dim 1", "value of `self.temperature`"
    library: str | None = None         # top-level package of the guarded line when not user code
    added_at: Location | None = None   # the innermost frame that added the guard, when torch names it ("(f.py:9 in g)")


@dataclass
class Recompile:
    compile_id: str                # the new compile, e.g. "0/2"
    failures: list = field(default_factory=list)     # [GuardFailure], one per cache entry; the first is the most recent entry


@dataclass
class FunctionRecompiles:
    function: str                  # co_name, or a readable name for torch wrappers
    location: Location             # where the function is defined (mapped back to user code for wrappers)
    frame_id: int
    compiles: int                  # cache entries made (1 + recompiles)
    recompiles: list = field(default_factory=list)   # [Recompile]
    kinds: dict = field(default_factory=dict)        # kind -> count
    limit_hit: bool = False        # hit recompile_limit: this function ran eager afterwards
    limit: int | None = None
    wrapper: str | None = None     # e.g. "torch.compile(module) wrapper (torch/_dynamo/external_utils.py)"
    fixes: list = field(default_factory=list)        # [{kind, fix}] from knowledge/recompiles.yaml
    causes: list = field(default_factory=list)       # [{cause, kind, count, primary, expected, why, fix, guard,
                                                     #   compile_ids, location, stack, library}] every guard failure grouped
    expected_only: bool = False    # every cause is a one-time recompile torch expects (and no limit hit)


@dataclass
class ErrorInfo:
    type: str                      # exception type, short (e.g. "InductorError"), or "SIGSEGV", "Timeout"
    message: str
    category: str                  # row id of knowledge/triage.yaml
    title: str
    skill: str | None
    next_command: str | None       # exact command line to run next
    advice: str = ""
    location: Location | None = None   # innermost user frame of the traceback
    source: str = "stderr"          # "stderr", "trace", "signal", "timeout", "text"
    compile_id: str | None = None
    gb_id: str | None = None       # graph-break registry id when the error is a graph break (fullgraph)
    inner: dict | None = None      # the real failure inside torch's wrappers: {type, message, op?, inputs?, backend?}
    side: str = "compiler"         # knowledge/triage.yaml `side`: "user", "custom_op" or "compiler"
    suggested_fixes: list = field(default_factory=list)   # PyTorch's own "Suggested fixes:" lines, verbatim
    guard_site: dict | None = None  # export: {guard, location, fake_kernel} of the program's line that added the guard
                                    # a suggested fix bounds (the trace's guard_added events)
    fake_elsewhere: dict | None = None  # a custom op's fake kernel in a module the program never imports:
                                        # {op, file, line, importers} (custom_op_code.unimported_fakes)


def raised_break(err):
    """Whether an error (ErrorInfo or its dict) is a graph break Dynamo raised instead of logging
    (fullgraph=True, error_on_graph_break, strict export): its own triage row, or a more specific row matched
    first for an Unsupported error (a graph-break registry id in its message). There a function run through
    torch.compiler.disable is a graph break too, so an error: not a way around."""
    get = err.get if isinstance(err, dict) else (lambda k: getattr(err, k, None))
    # the type exactly: io.UnsupportedOperation or torch.onnx's UnsupportedOperatorError are no graph break (review)
    return get("category") == "graph_break_fullgraph" or bool(get("gb_id")) or \
        (get("type") or "").rsplit(".", 1)[-1] == "Unsupported"


@dataclass
class GraphInfo:
    compile_id: str
    function: str
    location: Location | None
    ops: int | None = None
    nodes: int | None = None
    compile_time_s: float | None = None
    backend_time_s: float | None = None
    inductor_time_s: float | None = None
    failed: str | None = None      # fail_type when this frame failed to compile


@dataclass
class Report:
    command: list
    run_dir: str
    exit_code: int | None = None
    signal: str | None = None
    timed_out: bool = False
    interrupted: bool = False      # Ctrl-C ended the program: the report covers what it did until then
    duration_s: float | None = None
    torch_version: str | None = None
    used_compile: bool = False     # Dynamo started at least once
    graphs: list = field(default_factory=list)            # [GraphInfo]
    graph_breaks: list = field(default_factory=list)      # [GraphBreak]
    recompiles: list = field(default_factory=list)        # [FunctionRecompiles]
    errors: list = field(default_factory=list)            # [ErrorInfo]
    stats: dict = field(default_factory=dict)
    next_steps: list = field(default_factory=list)        # [{why, skill, command}]
    artifacts: dict = field(default_factory=dict)         # name -> path
    notes: list = field(default_factory=list)
    # user bug or compiler bug, decided by an eager re-run (cdlib/verdict.py): {kind, summary, location,
    # eager: {exit_code, signal, timed_out, duration_s, type, message, location} | None}; None when nothing failed
    verdict: dict | None = None
    # triage --vs-eager: the program's stdout compiled vs eager (printed.compare_outputs) + eager_exit_code;
    # None when not asked for
    vs_eager: dict | None = None
    compiled_again: dict | None = None   # one function compiled from scratch again (its compile id repeated: Dynamo
                                         # reset between): {function, location, times, resets: [file:line code]}
    # by-design differences between compiled and eager (cdlib/semantics.py, knowledge/semantics.yaml):
    # [{id, title, device, explains_error, by, pytorch, seen, why, fix, verify}]
    semantics: list = field(default_factory=list)
    # the last lines the program printed (printed.printed: its stdout, then its own stderr lines; torch's
    # warnings and tracebacks left out), at most 6, and how many lines it printed in all
    printed_tail: list = field(default_factory=list)
    printed_lines: int = 0
    # PyTorch's Python warnings in the run's stderr, each once (printed.warnings_with_rows), with the
    # triage row that explains one: [{warning, row, title, advice}]
    torch_warnings: list = field(default_factory=list)

    def to_dict(self):
        d = dataclasses.asdict(self)
        d["schema"] = "compile-debug/triage/1"
        return d

    @property
    def status(self):
        if self.interrupted and not self.errors:
            return "interrupted"
        if self.errors:
            return "error"
        if self.graph_breaks or self.semantics or (self.vs_eager or {}).get("differ") or self.compiled_again or \
                any(f.limit_hit or (f.recompiles and not f.expected_only) for f in self.recompiles):
            return "issues"
        return "clean" if self.used_compile else "no-compile"
