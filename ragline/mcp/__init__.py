"""MCP for agents: `server` (the `ragline mcp` process, one principal), `tools` (the
document tools and their result shapes) and `gateway` (the knowledge gateway's tools)."""
