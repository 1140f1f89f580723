"""One module per store backend; `indexing.factory` chooses them from Settings."""
