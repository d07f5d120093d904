"""``expert mcp``: the tools over MCP (the mcp extra), in :mod:`.server`."""
