"""The program inside a box: ``python -m trace_envs.box.server REQUESTS REPLIES REPORTS LIMITS DENIED RUN_ID``.

Order matters (in a mount namespace of its own, :mod:`trace_envs.box.mounts` has already sealed every mount
but the scratch and dropped every capability): rlimits first, then every trusted import (its objects frozen
out of garbage collection: they live as long as the box), then the kernel layers that hold with or without
the hook (:mod:`~trace_envs.box.landlock`'s file-system view, then :mod:`~trace_envs.box.syscalls`'
seccomp filter; a box that cannot install one stops, unless it is a weaker box), then the
:class:`~trace_envs.box.protocol.Start` request (the module's text), then the audit hook, and only then the
module, executed from that text under the same name in every box. The box then serves one env, one
request at a time, until :class:`~trace_envs.box.protocol.Close` or end of input, and leaves with
``os._exit`` (no ``atexit`` handler or finalizer of the module runs). Nothing here is trusted by the
parent: every reply is parsed against the protocol, and nothing of what the box says passes a gate by
itself (the checks run in the parent).
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from trace_envs.core import CapabilityEnv, ParsedAction, Task
from trace_envs.core.env import defined_envs
from trace_envs.core.user import set_user_factory

from .audit import AuditPolicy, AuditReporter, install
from .limits import BoxLimits, apply_limits
from .lines import LineReader, PipeClosed
from .protocol import (
    MODULE_FILENAME,
    MODULE_NAME,
    PLUGIN_GROUP,
    PROTOCOL_VERSION,
    REQUEST,
    USER_LINE,
    Answer,
    Ask,
    Close,
    Failed,
    ParsedStep,
    Ready,
    Reset,
    ResetReply,
    SharedKey,
    Start,
    Step,
    StepReply,
    TaskActions,
    UserTurn,
    _Message,
)


def trusted_roots() -> list[str]:
    """Where trusted code is read from: the interpreter's prefixes and our packages (not the repo root)."""
    import gymnasium
    import pydantic

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, str(Path(__file__).resolve().parents[1])}
    for package in (*plugin_packages(), gymnasium, pydantic):
        roots.add(str(Path(package.__file__ or "").resolve().parent))
    return sorted(roots)


def plugin_packages() -> list[types.ModuleType]:
    """The top-level packages of the ``trace_envs.envs`` entry points already imported (``generated_envs`` for the
    shipped envs): plugin code is trusted, so the box reads it (the registry's group, read here without it)."""
    from importlib.metadata import entry_points

    names = {point.value.split(":")[0].split(".")[0] for point in entry_points(group=PLUGIN_GROUP)}
    return [sys.modules[name] for name in sorted(names) if name in sys.modules]


def load_env(start: Start) -> tuple[Any, str | None]:
    """Execute the module's text as :data:`MODULE_NAME` and build its one ``CapabilityEnv``."""
    if start.version != PROTOCOL_VERSION:
        raise RuntimeError(f"protocol version {start.version} asked, this box speaks {PROTOCOL_VERSION}")
    module = types.ModuleType(MODULE_NAME)
    module.__file__ = MODULE_FILENAME
    sys.modules[MODULE_NAME] = module
    exec(compile(start.source, MODULE_FILENAME, "exec", dont_inherit=True), module.__dict__)
    found = defined_envs(module)
    if len(found) != 1:
        names = ", ".join(sorted(c.__name__ for c in found)) or "none"
        raise TypeError(f"the module must define exactly one concrete CapabilityEnv subclass; found {names}")
    env = found[0](**start.options)
    env_id = getattr(module, "ENV_ID", None)
    return env, env_id if isinstance(env_id, str) else None


def actions_from_task(cls: type[CapabilityEnv]) -> list[TaskActions]:
    """The reference solutions ``cls`` leaves to ``CapabilityEnv`` (the task's, formatted), which the parent
    formats itself: none if it changes where the task comes from."""
    if cls.current_task is not CapabilityEnv.current_task:
        return []
    names: tuple[TaskActions, ...] = ("oracle_actions", "flawed_actions")
    return [name for name in names if getattr(cls, name) is getattr(CapabilityEnv, name)]


def ready(env: Any, env_id: str | None) -> Ready:
    return Ready(
        env_id=env_id,
        class_name=type(env).__name__,
        capability=env.capability.model_dump(mode="json", include={"name", "description", "hint"}),
        domain=env.domain.name,
        max_turns=int(env.max_turns),
        tool_names=None if env.tool_names is None else list(env.tool_names),
        tool_schemas=env.tool_schemas,
        policy=env.policy,
        policy_text=env.policy_text,
        instructions=env.instructions,
        actions_from_task=actions_from_task(type(env)),
    )


def shared_info(info: dict[str, Any], declared: Ready) -> list[SharedKey]:
    """Null the reset ``info`` values that equal what ``declared`` said once (the parent puts them back)."""
    shared: list[SharedKey] = []
    pairs: tuple[tuple[SharedKey, Any], ...] = (("tools", declared.tool_schemas), ("policy", declared.policy_text))
    for key, value in pairs:
        if key in info and info[key] == value:
            info[key] = None
            shared.append(key)
    return shared


def serve(env: Any, request: Reset | Step | Ask, declared: Ready) -> _Message:
    """One request against the env (``declared``: the :class:`Ready` it was built with)."""
    if isinstance(request, Reset):
        observation, info = env.reset(seed=request.seed, options=request.options)
        info = dict(info)
        shared = shared_info(info, declared)
        return ResetReply(observation=observation, info=info, task=env.current_task, seed=env.task_seed, shared=shared)
    if isinstance(request, Step):
        observation, reward, terminated, truncated, info = env.step(step_action(request.action))
        return StepReply(
            observation=observation, reward=float(reward), terminated=terminated, truncated=truncated, info=info
        )
    if request.what == "state":
        return Answer(value=env.domain.dump_state(env.state))
    if request.what == "verify":
        return Answer(value=env.verify().model_dump(mode="json"))
    return Answer(value=getattr(env, request.what)())


def step_action(action: str | ParsedStep) -> str | ParsedAction:
    """What the env acts on: text as it came, or the calls the parent parsed from a non-text action."""
    if isinstance(action, str):
        return action
    return ParsedAction(
        text=action.text, tool_calls=list(action.tool_calls), errors=list(action.errors), content=action.content
    )


def failed(exc: BaseException) -> Failed:
    """The exception as a reply, with the module's frames of its traceback (the lines a fix is about)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == MODULE_FILENAME]
    shown = traceback.format_list(frames[-5:]) + traceback.format_exception_only(type(exc), exc)
    return Failed(
        error=type(exc).__name__[:200],
        message=str(exc)[:2000],
        line=frames[-1].lineno if frames else None,
        traceback="".join(shown)[-3000:],
    )


class Channel:
    """The request and reply pipes: one JSON line each way per request."""

    def __init__(self, requests: int, replies: int, spin_seconds: float = 0.0):
        self.requests = LineReader(requests, spin_seconds)
        self.replies = replies

    def readline(self) -> bytes:
        """The next request line, whenever it comes (``b""`` once the parent has closed its end)."""
        try:
            return self.requests.readline()
        except PipeClosed:
            return b""

    def receive(self) -> Start | Reset | Step | Ask | Close | None:
        line = self.readline()
        return REQUEST.validate_json(line) if line else None

    def user_line(self, turn: UserTurn) -> tuple[str, bool]:
        """Ask the parent for the user's line (:class:`UserTurn`) and wait for its :class:`UserLine`."""
        self.send(turn)
        line = self.readline()
        if not line:  # the parent is gone: nothing is left to serve
            os._exit(0)
        answer = USER_LINE.validate_json(line)
        return answer.text, answer.done

    def send(self, message: _Message) -> None:
        try:
            data = message.model_dump_json(fallback=str).encode("utf-8", "replace") + b"\n"
        except (TypeError, ValueError) as exc:  # a value pydantic cannot write even with the fallback
            data = failed(exc).model_dump_json().encode("utf-8") + b"\n"
        while data:
            data = data[os.write(self.replies, data) :]


class ParentModel:
    """The ``user_model`` of a box's env while the parent's model plays the user: a link, not a model."""

    def __init__(self, channel: Channel):
        self.channel = channel

    def chat(self, messages: Any, **sampling: Any) -> Any:
        raise RuntimeError(
            "a boxed env's model-played user comes from the user factory (CapabilityEnv.make_user); this env "
            "calls the model itself, which a box cannot: leave user_model out, or keep make_user as it is"
        )


class ParentUser:
    """The user of a ``model_user`` episode: each line is asked of the parent, whose model plays it."""

    def __init__(self, model: ParentModel, task: Task):
        self.channel, self.task = model.channel, task
        self._done = False

    @property
    def done(self) -> bool:
        return self._done

    def start(self) -> str:
        text, self._done = self.channel.user_line(UserTurn(turn="start", task=self.task))
        return text

    def reply(self, agent_message: str) -> str:
        text, self._done = self.channel.user_line(UserTurn(turn="reply", agent_message=agent_message))
        return text


def parent_user(model: Any, task: Task) -> ParentUser:
    """The box's user factory: a user played by the parent (the only model a box's env is ever given)."""
    if not isinstance(model, ParentModel):
        raise TypeError("in a box, user_model is set by the box itself (the parent's model plays the user)")
    return ParentUser(model, task)


def report_limit_signals(reports: int, stages: list[str]) -> None:
    """Say on the report pipe when a soft limit is hit; SIGXCPU ends the box at once. The handler has a reporter
    of its own (``signal.getsignal`` hands it to anyone): the hook's is reachable from nowhere."""
    own = AuditReporter(reports, stages)

    def on_signal(signum: int, frame: types.FrameType | None) -> None:
        own.send({"type": "signal", "signal": signal.Signals(signum).name, "stage": own.stage})
        if signum == signal.SIGXCPU:
            os._exit(128 + signum)

    signal.signal(signal.SIGXCPU, on_signal)
    signal.signal(signal.SIGXFSZ, on_signal)


def report_seal(reporter: AuditReporter) -> None:
    """Pass on what :mod:`trace_envs.box.mounts` did before exec'ing us (sent before the module runs)."""
    from .mounts import SEAL_VARIABLE

    try:
        seal = json.loads(os.environ.pop(SEAL_VARIABLE, "null")) or {}
    except ValueError:
        return
    writable = seal.get("writable", ["/"])
    if not writable:
        reporter.send({"type": "isolation", "name": "read-only filesystem"})
    elif writable != ["/"]:
        reporter.send({"type": "isolation", "name": f"read-only filesystem except {', '.join(writable)}"})
    if seal.get("capabilities_dropped"):
        reporter.send({"type": "isolation", "name": "no capabilities"})
    if seal.get("scratch_quota"):
        reporter.send({"type": "isolation", "name": f"scratch quota ({int(seal['scratch_quota']) // 2**20} MiB tmpfs)"})
    if seal.get("hidden"):
        reporter.send({"type": "isolation", "name": "host temporary folder hidden"})
    if seal.get("proc_subset"):
        reporter.send({"type": "isolation", "name": "own /proc, processes only"})
    if seal.get("homes_covered"):
        reporter.send({"type": "isolation", "name": f"homes hidden ({', '.join(map(str, seal['homes_covered']))})"})
    if seal.get("pid_max"):
        reporter.send({"type": "isolation", "name": f"task limit (pid_max {int(seal['pid_max'])})"})


def readable_data() -> list[str]:
    """Data the trusted code reads at run time, besides its packages: the prompt templates (which a checkout
    keeps beside the package, not in it)."""
    from trace_envs.core.templates import templates_dir

    try:
        return [str(templates_dir())]
    except FileNotFoundError:
        return []


def unprivileged_uid() -> str:
    """The box's uid, as a layer: not root (so RLIMIT_NPROC binds); OSError where it is."""
    uid, euid = os.getuid(), os.geteuid()
    if 0 in (uid, euid):
        raise OSError(f"the box runs as uid {uid} (effective {euid}), not an unprivileged one")
    return f"unprivileged uid {uid}"


def install_kernel_layers(limits: BoxLimits, roots: list[str], reporter: AuditReporter) -> None:
    """Check the unprivileged uid, then install Landlock (read ``roots`` only, and of trace-envs only its kit:
    :mod:`~trace_envs.box.view`; write the scratch, our working folder) and the seccomp filter; each one in force
    is reported. One that fails ends the box (exit code 3, the reason on stderr), unless ``limits.weaker_box``."""
    from . import landlock, syscalls, view

    syscalls.library()  # loaded while every file can still be read
    readable, listable = view.carve(roots, view.hidden_parts(Path(__file__).resolve().parents[1]))
    readable += readable_data()
    layers = (unprivileged_uid, lambda: landlock.restrict(readable, [os.getcwd()], listable), syscalls.install)
    for layer in layers:
        try:
            reporter.send({"type": "isolation", "name": layer()})
        except OSError as exc:
            if not limits.weaker_box:
                sys.stderr.write(f"the box could not install a kernel layer: {exc}\n")
                sys.stderr.flush()
                os._exit(3)


SEALED_REPORT = {"type": "sealed"}
"""The last report of start-up (before the module's text is read): the parent believes no claim of isolation
after it (:data:`trace_envs.box.client.SEALED`)."""


def start_up(argv: list[str]) -> tuple[BoxLimits, Channel, Start, list[str]]:
    """Everything before the module runs: limits, trusted imports, kernel layers, the :class:`Start` request and
    the audit hook. Returns what :func:`main` goes on with; the reporter is not among them, so once this returns
    it is held by the hook and the signal handler alone (no frame under the module's code names it)."""
    requests, replies, reports = (int(value) for value in argv[:3])
    limits = BoxLimits.model_validate_json(argv[3])
    apply_limits(limits)
    stages = ["startup"]
    reporter = AuditReporter(reports, stages)
    report_limit_signals(reports, stages)
    import trace_envs.core  # noqa: F401  (every trusted import before the hook)

    roots = trusted_roots()
    report_seal(reporter)
    channel = Channel(requests, replies, limits.spin_seconds)
    gc.freeze()  # what the trusted imports made lives as long as the box: full collections need not walk it
    install_kernel_layers(limits, roots, reporter)
    reporter.send(SEALED_REPORT)
    start = channel.receive()
    if not isinstance(start, Start):
        os._exit(2)
    set_user_factory(parent_user)
    if limits.audit_hook:
        install(AuditPolicy(os.getcwd(), json.loads(argv[4]), roots), reporter, roots)
    stages[0] = "import"
    return limits, channel, start, stages


def main(argv: list[str]) -> None:
    """Start up (:func:`start_up`), load the module and serve its env until the parent closes."""
    _, channel, start, stages = start_up(argv)
    try:
        env, env_id = load_env(start)
        declared = ready(env, env_id)
        channel.send(declared)
    except BaseException as exc:  # the module's own code may raise anything, SystemExit included
        channel.send(failed(exc))
        os._exit(0)
    while True:
        request = channel.receive()
        if request is None or isinstance(request, Close | Start):
            break
        stages[0] = request.op
        if isinstance(request, Reset):
            env.user_model = ParentModel(channel) if request.model_user else None
        try:
            channel.send(serve(env, request, declared))
        except BaseException as exc:  # as above: an env error is a reply, never the end of the box
            channel.send(failed(exc))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
