"""bridge as an MCP server: ``python -m bridge.mcp`` (stdio by default, ``--http`` for HTTP)."""
