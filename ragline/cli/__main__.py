"""`python -m ragline.cli ...`: the same as the `ragline` command."""

from ragline.cli.commands import main

main()
