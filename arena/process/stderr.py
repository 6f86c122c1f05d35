"""Bounded captures of a bot's stderr and the excerpts quoted in fault messages.

The lowest module of :mod:`arena.process`: it imports only :func:`arena.protocol.printable` (and the end-of-match mark)
(control characters escaped in everything captured), so the report layer can use :func:`last_stderr_line` and :func:`stderr_excerpt` without pulling in the
process machinery.
"""

from __future__ import annotations

import re

from arena.protocol import END_OF_MATCH_MARK, printable

#: stderr bytes kept from the start and from the end of each match's log.
STDERR_HEAD = 16 * 1024


STDERR_TAIL = 16 * 1024


#: characters of stderr attached to a fault record.
FAULT_TAIL_CHARS = 2000


#: most recent stderr bytes kept per process for fault records (not reset between matches).
RECENT_BYTES = 4 * FAULT_TAIL_CHARS



class StderrLog:
    """A capped capture of a byte stream: the first ``head`` and the last ``tail`` bytes.

    Besides the capture (reset by :meth:`take` after every match, for the logs) it keeps the
    most recent :data:`RECENT_BYTES` bytes ever seen, which :meth:`tail_text` returns: a
    process that dies between two matches still has its last words for the fault record.

    :ivar total: bytes seen since the last :meth:`take`.
    :ivar marks: :data:`arena.protocol.END_OF_MATCH_MARK` lines seen since the last :meth:`take`
        (removed from the capture); ``first_mark``: the capture's bytes before the first one.
    """

    __slots__ = ("head", "tail", "total", "head_cap", "tail_cap", "recent", "marks", "first_mark")

    def __init__(self, head_cap: int = STDERR_HEAD, tail_cap: int = STDERR_TAIL) -> None:
        self.head_cap, self.tail_cap = head_cap, tail_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.recent = bytearray()
        self.total = 0
        self.marks = 0
        self.first_mark: int | None = None

    def feed(self, data: bytes) -> None:
        """Append ``data`` (end-of-match marks removed, their places noted); memory stays bounded
        by ``2 * (head_cap + tail_cap + RECENT_BYTES)``."""
        if END_OF_MATCH_MARK in data:  # a bot writes the line whole (one write of 26 bytes: one read)
            pieces = data.split(END_OF_MATCH_MARK)
            if self.first_mark is None:
                self.first_mark = self.total + len(pieces[0])
            self.marks += len(pieces) - 1
            data = b"".join(pieces)
        self.total += len(data)
        recent = self.recent
        recent += data[-RECENT_BYTES:]
        if len(recent) > 2 * RECENT_BYTES:
            del recent[:-RECENT_BYTES]
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_cap:
                del self.tail[:-self.tail_cap]

    def text(self) -> str:
        """Head, a marker with the number of omitted bytes if any, and tail, decoded."""
        tail = bytes(self.tail[-self.tail_cap:])
        omitted = self.total - len(self.head) - len(tail)
        out = printable(self.head.decode("utf-8", "replace"))
        if omitted > 0:
            out += f"\n[... {omitted} bytes omitted ...]\n"
        return out + printable(tail.decode("utf-8", "replace"))

    def tail_text(self, chars: int = FAULT_TAIL_CHARS) -> str:
        """The last ``chars`` characters seen (also before the last :meth:`take`)."""
        return printable(bytes(self.recent[-RECENT_BYTES:]).decode("utf-8", "replace"))[-chars:]

    def take(self) -> str:
        """:meth:`text`, then reset the capture (not the recent bytes of :meth:`tail_text`)."""
        out = self.text()
        self.head, self.tail, self.total = bytearray(), bytearray(), 0
        self.marks, self.first_mark = 0, None
        return out

    def take_parts(self) -> tuple[str | None, str, int]:
        """:meth:`take` cut at the first end-of-match mark: ``(text before it, text after it,
        marks seen)``; the first part is None when no mark was seen or it lies beyond the kept head."""
        marks, at = self.marks, self.first_mark
        if at is None or at > len(self.head):
            return None, self.take(), marks
        before = printable(self.head[:at].decode("utf-8", "replace"))
        del self.head[:at]
        self.total -= at
        return before, self.take(), marks



#: a line of Python's (3.11+) traceback position markers only (``~~~~^^^^``): no room for them in an excerpt
_CARETS = re.compile(r"\s*[~^]+[\s~^]*")


def stderr_excerpt(text: str, max_chars: int = 300, cut: bool = False) -> str:
    """The end of a bot's stderr for a one-screen message, cut on line boundaries.

    The last lines that fit in ``max_chars`` (newlines included), trailing blank lines
    dropped. When even the last line is longer, its beginning (where an error message
    says what went wrong) up to ``max_chars``, ending in ``…``.

    :param cut: ``text`` is a tail that may begin in the middle of a line (e.g.
        :attr:`arena.specs.Fault.stderr_tail` at its full length): its first line is then
        never shown whole; if it is the only line, it starts with ``…`` at a word boundary.
    """
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ""
    if cut and len(lines) > 1:
        lines = lines[1:]
        cut = False
    lines = [line for line in lines if not _CARETS.fullmatch(line)] or lines  # Python's ~~~^^^ under a frame
    if cut:
        space = lines[0].find(" ")
        lines = ["…" + (lines[0][space + 1:] if 0 <= space < 40 else lines[0])]
    out: list[str] = []
    size = 0
    for line in reversed(lines):
        add = len(line) + (1 if out else 0)
        if size + add > max_chars:
            break
        out.append(line)
        size += add
    if out:
        return "\n".join(reversed(out)).lstrip("\n")
    return lines[-1][:max_chars - 1].rstrip() + "…"



def last_stderr_line(text: str, max_chars: int = 200) -> str:
    """The last non-blank line of ``text`` (at most ``max_chars``, then ``…``): for a crash,
    usually the error message itself (``...: error: ...``, ``ValueError: ...``)."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line:
            return line if len(line) <= max_chars else line[:max_chars - 1].rstrip() + "…"
    return ""

