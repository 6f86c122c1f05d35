"""``arena new bot NAME [--lang python|js|c|sh]``: a working, commented bot to start from.

:func:`new_bot` writes ``NAME/`` with the bot's source (from ``arena/templates/``) and a
``bot.yaml`` holding its command — the shape ``bots: {from: DIR}`` collects — builds the C
bot when a compiler is there, and returns the lines to add to ``tournaments.yaml``.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from arena.errors import ArenaError

TEMPLATES = Path(__file__).resolve().parent / "templates"

#: per language: the template, the file written, the command (relative to the bot's folder)
LANGS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "python": ("bot.py.tmpl", "bot.py", ("python", "bot.py")),
    "js": ("bot.js.tmpl", "bot.js", ("node", "bot.js")),
    "c": ("bot.c.tmpl", "bot.c", ("./bot",)),
    "sh": ("bot.sh.tmpl", "bot.sh", ("sh", "bot.sh")),
}
C_BUILD = ("cc", "-O2", "-Wall", "-o", "bot", "bot.c")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass
class NewBot:
    """What :func:`new_bot` made.

    :ivar folder: the bot's folder.
    :ivar cmd: its command, relative to the folder it is run from (the folder's parent).
    :ivar built: for C, whether it was compiled (False when no ``cc`` is installed).
    """

    name: str
    lang: str
    folder: Path
    cmd: list[str]
    built: bool = True

    def yaml_lines(self, config_dir: Path | None = None) -> str:
        """The lines to add to ``tournaments.yaml`` (paths relative to ``config_dir``,
        default the current directory)."""
        base = Path(config_dir or os.getcwd()).resolve()
        try:
            rel = os.path.relpath(self.folder.resolve(), base)
        except ValueError:
            rel = str(self.folder.resolve())
        parts = [self.cmd[0] if self.cmd[0] in ("python", "node", "sh") else f"./{rel}/{self.cmd[0][2:]}"]
        parts += [f"{rel}/{p}" for p in self.cmd[1:]]
        project = Path(__file__).resolve().parent.parent
        return (f"bots:\n  {self.name}: {{cmd: [{', '.join(parts)}]}}\n"
                f"  random: {{cmd: [python, {project}/bots/random_bot.py]}}   # if not declared yet\n"
                f"tournaments:\n  - {{name: try-{self.name}, game: agram, players: 2, "
                f"bots: [random, {self.name}], deals: 20}}")

    def doctor_cmd(self) -> list[str]:
        """The bot's command as run from the folder's parent (for ``arena doctor``)."""
        head = self.cmd[0]
        if head.startswith("./"):
            return [f"./{self.folder.name}/{head[2:]}"]
        return [head] + [f"{self.folder.name}/{p}" for p in self.cmd[1:]]


def new_bot(name: str, lang: str = "python", parent: str | Path = ".") -> NewBot:
    """Write the bot ``name`` in ``parent/name/``.

    :param lang: python | js | c | sh.
    :returns: what was made.
    :raises ArenaError: for a bad name or language, or a folder that already exists (nothing
        is overwritten).
    """
    if not _NAME.match(name):
        raise ArenaError(f"bot name {name!r}: a bot name uses letters, digits, '_', '.', '-' and starts "
                         "with a letter or digit")
    if lang not in LANGS:
        raise ArenaError(f"--lang {lang!r}: choose one of {', '.join(LANGS)}")
    folder = Path(parent) / name
    if folder.exists():
        raise ArenaError(f"{folder} already exists; pick another name or remove it (nothing was written)")
    template, out, cmd = LANGS[lang]
    folder.mkdir(parents=True)
    text = (TEMPLATES / template).read_text(encoding="utf-8").format(name=name, path=f"{name}/{out}")
    (folder / out).write_text(text, encoding="utf-8")
    if lang in ("sh", "js"):
        (folder / out).chmod(0o755)
    (folder / "bot.yaml").write_text(
        f"# the command that starts {name}, run in this folder (read by `bots: {{from: DIR}}`)\n"
        f"cmd: [{', '.join(cmd)}]\n", encoding="utf-8")
    made = NewBot(name, lang, folder, list(cmd))
    if lang == "c":
        made.built = _build_c(folder)
    return made


def _build_c(folder: Path) -> bool:
    """Compile ``bot.c`` with ``cc`` when there is one; False without a compiler.

    :raises ArenaError: when the compiler rejects the template (its message quoted).
    """
    if shutil.which(C_BUILD[0]) is None:
        return False
    res = subprocess.run(C_BUILD, cwd=folder, capture_output=True, text=True, timeout=120)
    if res.returncode != 0:
        raise ArenaError(f"{folder}/bot.c did not compile ({' '.join(C_BUILD)}): {res.stderr.strip()[:500]}")
    return True
