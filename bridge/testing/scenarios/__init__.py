"""Scenario files as pytest tests: loading (pure), assertions (pure), the pytest hooks."""
