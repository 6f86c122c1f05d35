"""What the browser tests measure on a loaded report page (via :class:`tests.report.browser.Page`)."""

from __future__ import annotations

import json
from typing import Any

from tests.report.browser import Page

#: JS: the rectangles of every axis tick label, grouped by the plot they belong to.
TICK_RECTS = """(() => {
  const out = {};
  for (const t of document.querySelectorAll('.tick')) {
    const box = t.closest('svg') ? 'rating-' + t.classList[1] : t.parentElement.className;
    const r = t.getBoundingClientRect();
    (out[box] = out[box] || []).push([t.textContent, r.left, r.top, r.right, r.bottom]);
  }
  return out;
})()"""


def overlaps(rects: list[list[Any]]) -> list[tuple[str, str]]:
    """Pairs of labels whose rectangles ``[text, left, top, right, bottom]`` intersect."""
    bad = []
    for i, a in enumerate(rects):
        for b in rects[i + 1:]:
            if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]:
                bad.append((a[0], b[0]))
    return bad


def visible_rows(page: Page, table: str) -> list[str]:
    """The ``data-bot`` of the rows of ``#table`` that are displayed."""
    return page.js(f"[...document.querySelectorAll('#{table} tbody tr')].filter(r => r.offsetParent !== null)"
                   ".map(r => r.dataset.bot)")


def plotted(page: Page) -> list[str]:
    """The bots whose rating line is drawn."""
    return page.js("[...document.querySelectorAll('#rating-plot path.rating-line')].map(p => p.dataset.bot)")


def line_points(page: Page, bot: str) -> int:
    """How many vertices the drawn rating line of ``bot`` has (0 if not drawn)."""
    return page.js(f"(() => {{const p = document.querySelector('#rating-plot path.rating-line[data-bot={json.dumps(bot)}]');"
                   "return p ? (p.getAttribute('d').match(/[ML]/g) || []).length : 0;})()")
