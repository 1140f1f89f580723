"""The web console served at `/` by `ragline serve`: one static page and its script, which
talk to the same HTTP API with the same API keys (sent as a header, never in a URL)."""
