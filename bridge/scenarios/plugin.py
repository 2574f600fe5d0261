"""pytest hooks for scenario files (being written)."""
