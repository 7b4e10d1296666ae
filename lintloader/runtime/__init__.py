"""Runtime probe behind ``lintloader verify``.

Every module that needs torch or Lightning imports it inside a function, so importing this
package (and the click command in :mod:`lintloader.cli.verify`) works without the
``runtime`` extra installed; the probe then exits 2 with a one-line install hint.
"""
