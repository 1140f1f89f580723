"""Suite-wide defaults."""

from __future__ import annotations

import os

# An API app loads its models before serving (RAGLINE_API__WARM_UP, seconds per app); the
# tests start hundreds of apps and load what they need on first use instead.
os.environ.setdefault("RAGLINE_API__WARM_UP", "false")
# ... and each would freeze the whole test process's heap out of garbage collection.
os.environ.setdefault("RAGLINE_API__GC_FREEZE", "false")
