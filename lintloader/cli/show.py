"""``check --show-settings`` and ``check --show-files``, as ruff's: what a run would use, printed
instead of running it."""

from __future__ import annotations

from lintloader.rules.registry import all_rules
from lintloader.scan.discover.escape import printable
from lintloader.scan.model import Discovery
from lintloader.settings.config import Config


def settings_text(config: Config, discovery: Discovery) -> str:
    """The resolved configuration, the file it came from, the roots, the vocabulary in force."""
    from lintloader.domain import torch_api

    enabled = [rule.code for rule in all_rules() if config.enabled(rule.code)]
    ignores = [f"{glob} = {', '.join(codes)}" for glob, codes in config.per_file_ignores]
    rows = [
        ("configuration", config.source or "(none: defaults)"),
        ("select", ", ".join(config.select)),
        ("ignore", ", ".join(config.ignore) or "(none)"),
        ("rules enabled", ", ".join(enabled) or "(none)"),
        ("min-severity", config.min_severity.label),
        ("exclude", ", ".join(config.exclude) or "(none)"),
        ("per-file-ignores", "; ".join(ignores) or "(none)"),
        ("max-file-size", f"{config.max_file_size:g} MB"),
        ("baseline", config.baseline or "(none)"),
        ("output-format", ", ".join(config.output_format) or "text"),
        ("roots", ", ".join(dict.fromkeys(discovery.roots)) or "(none)"),
        ("files", str(len(discovery.files))),
        ("DataLoader", ", ".join(sorted(torch_api.DATALOADER_PATHS))),
        ("iteration roots", ", ".join(sorted(torch_api.ITER_ROOTS))),
        ("epoch hooks", torch_api.EPOCH_HOOKS.pattern),
        ("sinks", f"<loader>.{torch_api.SINK_ATTRIBUTE} = None / del, "
         f"<loader>.{torch_api.SINK_ATTRIBUTE}.{torch_api.SHUTDOWN_METHOD}()"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    # values come from a configuration file: their control characters are escaped
    return "".join(f"{name:<{width}}  {printable(value)}\n" for name, value in rows)


def files_text(discovery: Discovery) -> str:
    """Every file the run would check, sorted, one a line."""
    return "".join(f"{name}\n" for name in sorted(f.display for f in discovery.files))
