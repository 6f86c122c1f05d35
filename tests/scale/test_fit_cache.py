"""A small field's fit kept for an unchanged table (arena/fit_cache.py): the same bits, no refits."""

from __future__ import annotations

import json
import zipfile

import numpy as np

from arena import batchfit, fit_cache
from arena.results import standings
from tests.scale.test_tallies import assert_same_tables, fresh, journal_lines


def test_an_unchanged_table_reuses_the_fit_and_a_new_record_refits(tmp_path, monkeypatch):
    lines, meta = journal_lines(tmp_path, 240, 10, 4)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines[:200]))
    calls = []
    real = batchfit.fit
    monkeypatch.setattr(batchfit, "fit", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = standings(folder, history=False)
    assert len(calls) == 1 and (folder / fit_cache.NAME).exists()
    again = standings(folder, history=False)
    assert len(calls) == 1  # nothing new: the kept fit, no bootstrap
    assert_same_tables(again, first)
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    more = standings(folder, history=False)
    assert len(calls) == 2
    assert_same_tables(more, fresh(folder, tmp_path))


def test_a_crafted_or_foreign_kept_fit_is_ignored(tmp_path):
    lines, meta = journal_lines(tmp_path, 120, 8, 6)
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps(meta))
    (folder / "matches.jsonl").write_bytes(b"".join(lines))
    ref = standings(folder, history=False)
    path = folder / fit_cache.NAME
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    # the same key, a deflated member (a bomb's shape): refused before np.load inflates it
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for k, a in {**arrays, "theta": arrays["theta"] + 1.0}.items():
            with z.open(k + ".npy", "w") as f:
                np.lib.format.write_array(f, a)
    assert_same_tables(standings(folder, history=False), ref)
    # another key with wrong numbers: not taken
    head = json.loads(bytes(arrays["head"]).decode())
    np.savez(path, **{**arrays, "theta": arrays["theta"] + 1.0,
                      "head": np.frombuffer(json.dumps({**head, "key": "0" * 32}).encode(), np.uint8)})
    assert_same_tables(standings(folder, history=False), ref)
    path.write_bytes(b"not a zip")
    assert_same_tables(standings(folder, history=False), ref)
