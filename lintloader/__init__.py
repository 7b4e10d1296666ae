"""lintloader: find and fix code that throws away a PyTorch DataLoader's worker pool."""

__version__ = "0.1.0"
PROJECT_URL = "https://github.com/lintloader/lintloader"
DOCS_URL = f"{PROJECT_URL}/blob/main/docs"
