"""`python -m ragline.worker.main ...`: the CLI, for launching workers from tests and
benchmarks with the interpreter at hand (no dependency on the console script's path)."""

from ragline.cli import app

if __name__ == "__main__":
    app()
