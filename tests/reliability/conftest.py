"""The reliability suite: one test per case of docs/RELIABILITY.md.

Each test carries ``@pytest.mark.reliability(N)`` (tests elsewhere that already prove a case
carry it too); ``tests/reliability/table.py`` renders the table from the last run's results.
"""
