"""The exit statuses of ``lintloader verify`` and ``lintloader trace``."""

from __future__ import annotations

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_CANNOT_RUN = 2
EXIT_INTERRUPTED = 130
