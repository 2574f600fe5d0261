"""Browser operations for any tab (snapshot, actions, DOM reads, tabs): the Python API the
MCP browser tools wrap."""
