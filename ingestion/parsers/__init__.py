"""One parser module per format; each exposes `parse(data: bytes, name: str) -> ParsedDocument`."""
