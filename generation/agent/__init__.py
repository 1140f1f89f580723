"""The tool-calling agent loop: an OpenAI-compatible model decides which tools to call,
Ragline runs them, and the final answer's citation labels are checked like /v1/ask's.

The loop knows tools only through `ToolRegistry`; the application (`ragline.agent`)
registers what it offers (document search, document metadata, later the gateway's
operations), so this package imports no application code.
"""
