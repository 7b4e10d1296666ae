"""lintloader: find and fix code that throws away a PyTorch DataLoader's worker pool."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/lintloader/lintloader"
DOCS_URL = f"{PROJECT_URL}/blob/main/docs"

# How to install an optional extra, as every hint lintloader prints says it: lintloader is not on
# a package index, so from a checkout (with ``-c constraints.txt`` where the extra brings torch,
# so that pip picks the CPU wheel the project is tested with) or from git.
TORCH_EXTRAS = frozenset({"runtime"})  # extras that install torch


def extra_hint(extra: str) -> str:
    constraints = "-c constraints.txt " if extra in TORCH_EXTRAS else ""
    return (
        f'pip install {constraints}-e ".[{extra}]" (in a checkout), or '
        f'pip install "lintloader[{extra}] @ git+{PROJECT_URL}@<commit-sha>"'
    )
