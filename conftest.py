"""Project-wide pytest configuration.

The bridge plugin itself is loaded through its ``pytest11`` entry point (never named in
``pytest_plugins`` here, or pytest would register it twice). Test helpers shared by the
suite live in ``tests/conftest.py``.
"""
