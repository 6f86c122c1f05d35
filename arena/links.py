"""Names and links of the class pages next to ``report.html`` (``replays/``, ``bots/``).

Kept apart (it imports nothing of the arena) so that ``report.html``'s renderer can link the
pages that :mod:`arena.bot_pages` writes without depending on it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence


def replay_name(match_id: str) -> str:
    """The file name of a match's viewer under ``replays/``: the id with ``/`` as ``__``."""
    return match_id.replace("/", "__") + ".html"


def report_links(bots: Sequence[str]) -> str:
    """The ``report.html`` section linking each bot's page and the replays index."""
    e = html.escape
    links = " · ".join(f'<a href="bots/{e(b)}.html">{e(b)}</a>' for b in bots)
    return ('<section id="class-section" style="margin-top:16px"><h2>Bots and replays</h2>'
            f"<p>A page per bot (its matches, faults with stderr, crosstable row, replays of its losses): {links}</p>"
            '<p><a href="replays/index.html">Replays</a> of matches whose deal is complete, move by move, '
            "from any seat's point of view.</p></section>")
