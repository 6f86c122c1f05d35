"""``report.html``: one self-contained page per tournament (issue 22: readable at 3, 60 and 1,000 bots).

:mod:`~arena.report_html.page` lays the page out, :mod:`~arena.report_html.tables_html` writes
its static tables, :mod:`~arena.report_html.data` builds the bounded data it embeds, and
``script.js`` / ``report.css`` (inlined) draw the rating plot and the crosstable in the browser
and make the tables searchable and sortable.
"""

from arena.report_html.data import crosstable_matrix, rating_series
from arena.report_html.page import HEADER_BG, default_links, render, write_report
from arena.report_html.tables_html import leaderboard_html, reliability_html, team_stats, teams_html

__all__ = ["HEADER_BG", "crosstable_matrix", "default_links", "leaderboard_html", "rating_series", "reliability_html",
           "render", "team_stats", "teams_html", "write_report"]
