"""A private copy of the shipped catalogue per eval test module (an eval run writes chat history); the
shop export's catalogue is the shared `shop_db` (tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import _clone, _discard


@pytest.fixture(scope="module")
def eval_db(admin_url, catalog_template):
    name, database = _clone(admin_url, catalog_template)
    yield database
    _discard(admin_url, name, database)
