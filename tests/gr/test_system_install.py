"""A GNU Radio user's install: what scripts/setup.sh put into GNU Radio's prefix
(``cmake --install build``), used the way a GNU Radio user uses it: a fresh
login shell with no environment variables of this one (no PYTHONPATH, no
GRC_BLOCKS_PATH, a new HOME), the system's ``grcc``, ``/usr/bin/python3`` and
GRC's own block library.

They check the install this checkout made (``build/install_manifest.txt``).
Without it they are skipped, except in CI, where scripts/setup.sh has just made it.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MANIFEST = os.path.join(REPO, "build", "install_manifest.txt")
EXAMPLES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(REPO, "examples", "*.grc")))
RECORDING = os.path.join(REPO, "examples", "data", "wifi1944_bpsk.sigmf-data")
RERUN = "run bash scripts/setup.sh (as root) again"


def block_ids():
    """The id of every grc/*.block.yml."""
    ids = set()
    for path in glob.glob(os.path.join(REPO, "grc", "*.block.yml")):
        with open(path) as f:
            ids.update(re.findall(r"^id: (\S+)$", f.read(), re.M))
    return ids


@pytest.fixture(scope="module")
def installed():
    """The files this checkout's ``cmake --install build`` wrote."""
    if not os.path.isfile(MANIFEST):
        reason = f"no system install from this checkout ({MANIFEST}): {RERUN}"
        if os.environ.get("CI"):
            pytest.fail(f"CI: {reason}")
        pytest.skip(reason)
    with open(MANIFEST) as f:
        return set(f.read().split())


@pytest.fixture(scope="module")
def gr_user(tmp_path_factory):
    """Runs a command as a GNU Radio user: ``bash -l -c`` with nothing of this environment."""
    home = tmp_path_factory.mktemp("home")

    def run(args, cwd, timeout=300):
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
        return subprocess.run(["bash", "-l", "-c", shlex.join(map(str, args))], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=timeout)
    return run


def installed_path(installed, relative):
    """The one installed file ending with ``relative``."""
    found = [f for f in installed if f.endswith("/" + relative)]
    assert len(found) == 1, f"{relative}: {found or 'not installed'}; {RERUN}"
    return found[0]


WHERE = """import json, gpuldpc, gpuldpc._core, gnuradio.gpuldpc
from gpuldpc import _native
print(json.dumps({"gpuldpc": gpuldpc.__file__, "_core": gpuldpc._core.__file__,
                  "blocks": gnuradio.gpuldpc.__file__, "version": gpuldpc.__version__,
                  "native": _native.available()}))"""


def test_gnu_radio_python_imports_the_system_install(installed, gr_user, tmp_path):
    result = gr_user(["/usr/bin/python3", "-c", WHERE], tmp_path)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    for key in ("gpuldpc", "_core", "blocks"):
        assert found[key] in installed, f"/usr/bin/python3 imports {key} from {found[key]}"
    import gpuldpc
    assert (found["version"], found["native"]) == (gpuldpc.__version__, True)


def test_the_venv_imports_its_own_copy(installed, tmp_path):
    """The venv sees /usr/local (system site packages), but its own site-packages come first."""
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests run outside a virtual environment")
    result = subprocess.run([sys.executable, "-c", WHERE], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    for key in ("gpuldpc", "_core", "blocks"):
        assert found[key] not in installed, f"the venv imports the system's {key}: {found[key]}"


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(REPO, "grc", "*.block.yml"))) +
                         sorted(glob.glob(os.path.join(REPO, "python", "gnuradio", "gpuldpc", "*.py"))),
                         ids=os.path.basename)
def test_the_system_install_is_this_checkout(installed, path):
    relative = os.path.relpath(path, REPO)
    relative = relative.replace("grc/", "share/gnuradio/grc/blocks/").replace("python/", "")
    with open(installed_path(installed, relative), "rb") as copy, open(path, "rb") as source:
        assert copy.read() == source.read(), f"the installed {relative} is not this checkout's: {RERUN}"


def test_grc_platform_holds_every_block(installed, gr_user, grc_platform, tmp_path):
    """GRC's own platform, as grcc and gnuradio-companion build it: no errors, every block under [GPU LDPC].

    (gnuradio-companion's own Platform needs a display; its GTK 3 and PangoCairo
    are checked by importing its main module.)
    """
    script = "import gnuradio.grc.main\n" + grc_platform + """print(json.dumps({"problems": records, "paths": platform.config.block_paths, "count": len(platform.blocks),
                  "blocks": {key: [block.category, block.loaded_from] for key, block in platform.blocks.items()
                             if key.startswith("gpuldpc_")}}))"""
    result = gr_user(["/usr/bin/python3", "-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    library = json.loads(result.stdout)
    assert library["problems"] == []
    assert library["count"] > 500                      # GNU Radio's own blocks are there too
    assert set(library["blocks"]) == block_ids()
    for key, (category, loaded_from) in library["blocks"].items():
        assert category == ["GPU LDPC"], key
        assert loaded_from in installed, f"{key} comes from {loaded_from}"
        assert os.path.dirname(loaded_from) in library["paths"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_system_grcc_compiles_every_example(installed, gr_user, tmp_path, name):
    result = gr_user(["grcc", "-o", tmp_path, os.path.join(REPO, "examples", name)], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    generated = (tmp_path / name.replace(".grc", ".py")).read_text()
    with open(os.path.join(REPO, "examples", name.replace(".grc", ".py"))) as f:
        assert generated == f.read()


FRAMES = re.compile(r"^payload_check: (\d+) of (\d+) frames decoded, (\d+) missing, (\d+) out of order; "
                    r"FER \S+ \((\d+)/\d+\), BER \S+ \((\d+)/(\d+) info bits\)$", re.M)


def test_generated_receiver_decodes_every_frame(installed, gr_user, tmp_path):
    """examples/rx_recording.grc through the system's grcc, run headless by /usr/bin/python3."""
    compiled = gr_user(["grcc", "-o", tmp_path, os.path.join(REPO, "examples", "rx_recording.grc")], tmp_path)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    result = gr_user(["/usr/bin/python3", tmp_path / "rx_recording.py", "--recording", RECORDING], tmp_path)
    assert result.returncode == 0, result.stderr
    counts = FRAMES.findall(result.stdout)
    assert counts == [("48", "48", "0", "0", "0", "0", str(48 * 972))], result.stdout


def test_main_job_with_gnu_radio_python(installed, gr_user, tmp_path):
    """`python3 -m gnuradio.gpuldpc.rx_demo` finds the recording installed under <prefix>/share/gpuldpc."""
    result = gr_user(["/usr/bin/python3", "-m", "gnuradio.gpuldpc.rx_demo"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    recording = re.search(r"^recording +(\S+)$", result.stdout, re.M).group(1)
    assert recording in installed
    assert re.search(r"^frames +48 decoded of 48 sent, 0 lost, 0 out of order, 0 failed", result.stdout, re.M)
