"""L2: one content_id per chunk, written to the metadata store (truth) and derived stores."""
