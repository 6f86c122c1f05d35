"""Bot processes (DESIGN "Isolation"): the face of the subpackage.

One module per job, lowest first (each imports only those before it, plus
:mod:`arena.errors`, :mod:`arena.specs` and :mod:`arena.protocol`):

* :mod:`~arena.process.stderr` — bounded stderr captures and the excerpts of fault messages;
* :mod:`~arena.process.workdirs` — working-directory roots and folders, stale-root sweep;
* :mod:`~arena.process.reaping` — subreaper, SIGCHLD under Ray, orphan sweep, ``kill_all``;
* :mod:`~arena.process.sandbox` — which sandbox applies (``auto``), bwrap/unshare argv;
  :mod:`~arena.process.sandbox_view` — the folders a sandboxed bot sees (covers, binds, hidden);
* :mod:`~arena.process.launch` — argv and environment of a bot, the wrapper chain;
* :mod:`~arena.process.preflight` — checks before a batch starts anything;
* :mod:`~arena.process.bot` — :class:`BotProcess`, one running bot;
* :mod:`~arena.process.hub` — :class:`Hub`, the pipe multiplexer.

Everything the rest of the arena uses is re-exported here (``from arena.process import
BotProcess, Hub, preflight, ...``).
"""

from __future__ import annotations

from arena.process.bot import (
    CHUNK,
    MAX_QUEUED_LINES,
    STDERR_DRAIN_S,
    TERM_GRACE_S,
    TICK_S,
    BotProcess,
)
from arena.process.hub import Hub
from arena.process.launch import bot_env, prlimit_available, resolve_argv, wrapper_argv
from arena.process.preflight import (
    BotSetupError,
    check_access,
    check_command,
    check_sandbox,
    clear_caches,
    foreign_message,
    outside_files,
    preflight,
)
from arena.process.reaping import (
    PR_SET_CHILD_SUBREAPER,
    default_sigchld,
    kill_all,
    live_leaders,
    make_subreaper,
    pid_running,
    sigchld_ignored,
    sweep_orphans,
)
from arena.process.sandbox import (
    MODES,
    PROJECT_ROOT,
    SANDBOX_TMPFS,
    SandboxUnavailable,
    effective_mode,
    hidden_paths,
    hide_bot_folders,
    hide_from_sandbox,
    hide_results_root,
    sandbox_binds,
    unsandboxed_warning,
    warn_if_unsandboxed,
)
from arena.process.sandbox_view import foreign_files
from arena.process.stderr import (
    FAULT_TAIL_CHARS,
    RECENT_BYTES,
    STDERR_HEAD,
    STDERR_TAIL,
    StderrLog,
    last_stderr_line,
    stderr_excerpt,
)
from arena.process.workdirs import (
    ROOT_PREFIX,
    STALE_ROOT_AGE_S,
    is_bot_home,
    live_workdirs,
    new_workdir,
    pid_exists,
    remove_workdir,
    sweep_stale_roots,
    workdir_root,
)

__all__ = [
    "MODES", "SandboxUnavailable", "effective_mode", "hidden_paths", "unsandboxed_warning",
    "warn_if_unsandboxed", "CHUNK", "FAULT_TAIL_CHARS", "MAX_QUEUED_LINES", "PROJECT_ROOT", "PR_SET_CHILD_SUBREAPER",
    "RECENT_BYTES", "ROOT_PREFIX", "SANDBOX_TMPFS", "STALE_ROOT_AGE_S", "STDERR_DRAIN_S",
    "STDERR_HEAD", "STDERR_TAIL", "TERM_GRACE_S", "TICK_S", "BotProcess", "BotSetupError", "Hub",
    "StderrLog", "bot_env", "check_access", "check_command", "check_sandbox", "clear_caches",
    "foreign_files", "foreign_message", "outside_files",
    "default_sigchld", "hide_bot_folders", "hide_from_sandbox", "hide_results_root", "is_bot_home", "kill_all", "last_stderr_line",
    "live_leaders", "live_workdirs", "make_subreaper", "new_workdir", "pid_exists", "pid_running",
    "preflight", "prlimit_available", "remove_workdir", "resolve_argv", "sandbox_binds",
    "sigchld_ignored", "stderr_excerpt", "sweep_orphans", "sweep_stale_roots", "workdir_root",
    "wrapper_argv",
]
