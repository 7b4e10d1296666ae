"""``python -m lintloader``: the same command line as the ``lintloader`` script."""

from lintloader.cli.main import run

if __name__ == "__main__":
    run(prog_name="lintloader")
