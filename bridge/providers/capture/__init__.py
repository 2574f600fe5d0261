"""Captures of a provider's page as bridge relies on it, with the person's content removed
(docs/captures.md): taken during a tiny ask (``bridge doctor --live --capture DIR``), kept as
test data (tests/captures/), and checked offline against the packs, the stream parsers and
the completion detectors (``pytest --bridge-capture DIR``).

Pure cores: ``sanitize`` (what may be kept), ``dom`` (the page's structure), ``streams`` (the
answer request's framing), ``signals`` (the completion signals over time), ``check`` and
``propose`` (a capture against a pack), ``diff`` (two captures). I/O: ``take`` (during an
ask) and ``matching`` (a capture's structure in a browser page, for CSS).
"""
