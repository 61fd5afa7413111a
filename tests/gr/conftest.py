"""Fixtures of the GNU Radio QA (tests/gr): skip without GNU Radio (the backend fixture is in tests/conftest.py)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("gnuradio.gr", reason="GNU Radio is not installed")

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


GRC_PLATFORM = """import json, logging
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append(f"{record.levelname}: {record.getMessage()}")
logging.getLogger().addHandler(Keep(logging.WARNING))
from gnuradio import gr
from gnuradio.grc.core.platform import Platform
platform = Platform(name="check", prefs=gr.prefs(), version=gr.version(),
                    version_parts=(gr.major_version(), gr.api_version(), gr.minor_version()))
platform.build_library()
"""


@pytest.fixture(scope="session")
def grc_platform():
    """The start of a script that builds GRC's own block library as grcc and
    gnuradio-companion do, keeping its warnings and errors in ``records``; a test appends
    what it prints."""
    return GRC_PLATFORM


@pytest.fixture(scope="session")
def grcc():
    """``grcc(path, out_dir)``: the system's ``grcc`` on a .grc, its ``CompletedProcess``
    (skips without grcc).  GRC sees this checkout's YAML and, of the global folders, GNU
    Radio's own alone: a system install of ours (/usr/local/share/gnuradio/grc/blocks,
    scripts/setup.sh) would override grc/.  It runs under this interpreter (grcc's shebang
    names /usr/bin/python3, which may not see gpuldpc, e.g. in a venv)."""
    path = shutil.which("grcc")
    if path is None:
        pytest.skip("grcc (GNU Radio Companion) is not installed")
    from gnuradio import gr
    env = dict(os.environ, GRC_BLOCKS_PATH=os.path.join(REPO, "grc"),
               GR_CONF_GRC_GLOBAL_BLOCKS_PATH=os.path.join(gr.prefix(), "share", "gnuradio", "grc", "blocks"))

    def run(grc, out_dir):
        return subprocess.run([sys.executable, path, "-o", str(out_dir), str(grc)], capture_output=True,
                              text=True, env=env, timeout=300)
    return run
