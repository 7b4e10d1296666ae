"""``python -m lintloader``: the same command line as the ``lintloader`` script."""

from lintloader.cli.main import main

if __name__ == "__main__":
    main(prog_name="lintloader")
