"""The wire: pure formats and constants shared by both ends of a link (no I/O)."""
