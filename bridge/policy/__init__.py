"""Policy: pure decisions on what bridge may do (URLs, files, tabs, pages, downloads)."""
