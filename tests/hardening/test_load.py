"""A reduced run of reliability/load_test.py: 60 updates over 6 chats, concurrently, through the serve machinery.

Per-chat order is kept, nothing is answered twice or lost, and the database connection peak stays
within the pool size. The full run (500 updates, 50 chats) is in RELIABILITY.md.
"""

from __future__ import annotations

from reliability.load_test import run_load
from tests.hardening.support import record_figure


def test_reduced_load_keeps_order_without_duplicates_or_losses(fresh_db, monkeypatch, state_dir):
    monkeypatch.setenv("DATABASE_POOL_SIZE", "4")
    figures = run_load(fresh_db.conninfo, updates=60, chats=6, senders=6, workers=4, max_llm_delay=0.1, time_cap=60)
    record_figure("load.reduced", figures)
    assert not figures["capped"], figures
    assert figures["webhook_statuses"] == {"200": 60}
    assert figures["turns_done"] == 60 and figures["answers_seen"] == 60
    assert figures["duplicates"] == 0 and figures["lost"] == 0 and figures["chats_out_of_order"] == 0
    assert figures["dead_letters"] == 0
    assert 1 <= figures["db_connections"]["peak"] <= 4 + 1  # the pool, plus the fixture's own pool at most
