"""The wheel carries ``fixtures/`` and ``SPEC.md`` inside ``conformance/``.

The cases name recorded exchanges and session files under ``fixtures/``, and ``lint`` reads
``SPEC.md``; both sit beside the packages in a checkout, where no package can claim them as
package data. Copying them into the built ``conformance/`` lets an installed runner find them
(``conformance/runner/_cases.py``, ``shipped_places``). Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

_SHIPPED = ("fixtures", "SPEC.md")


class _BuildWithFixtures(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads them from the checkout itself
            return
        for name in _SHIPPED:
            source, target = Path(name), Path(self.build_lib) / "conformance" / name
            if source.is_dir():
                shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(source, target)


setup(cmdclass={"build_py": _BuildWithFixtures})
