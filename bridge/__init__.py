"""bridge: let AI agents use a real, logged-in Chrome, and prove it still works."""

__version__ = "0.2.0"
