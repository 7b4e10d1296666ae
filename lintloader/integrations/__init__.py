"""Glue for the programs that run lintloader for its users: pre-commit, flake8, CI.

``project`` indexes a whole project while reporting on a few files (pre-commit passes only the
staged ones; chains cross files); ``flake8_plugin`` is the ``LL`` flake8 extension.
"""
