"""Domain types, settings, ids and errors shared by every layer. Imports no layer."""
