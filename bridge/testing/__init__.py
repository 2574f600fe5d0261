"""bridge in pytest: the plugin, the Playwright plugin, and scenario files as tests."""
