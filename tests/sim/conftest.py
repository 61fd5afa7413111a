"""Fixtures of the campaign tests: the fastest CPU backend, a small campaign and its rows, a CLI
environment, a bench campaign script's --quick run."""
import json
import os

import pytest

import gpuldpc as gl
from gpuldpc.sim import CampaignSpec, run_campaign


@pytest.fixture(scope="session")
def small_args(backend) -> dict:
    """WiFi 648 r1/2, NMS 10 iterations, 16-frame batches: a few batches end the 1.5 dB point
    (FER ~0.3, 10 errors), the 256-frame budget ends the 2.5 dB point (FER ~5e-3)."""
    return dict(codes="wifi-648-1/2", ebn0="1.5:2.5:1.0", algorithms="nms", iterations=10, max_errors=10,
                max_frames=256, backend=backend, seed=7, frames_per_batch=16)


@pytest.fixture(scope="session")
def small_spec(small_args):
    return CampaignSpec.make(**small_args)


@pytest.fixture(scope="session")
def reference_rows(small_spec, tmp_path_factory):
    """The small campaign run once, in this process."""
    return run_campaign(small_spec, tmp_path_factory.mktemp("ref"), progress=False)


@pytest.fixture(scope="session")
def cli_env() -> dict:
    """Environment for a ``python -m gpuldpc.sim`` subprocess that imports this gpuldpc."""
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(gl.__file__)))
    env["PYTHONPATH"] = pkg + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def counts(rows):
    """The integer results of CSV rows, keyed by run and point (what must reproduce exactly)."""
    return {(r["code"], r["algorithm"], r["iterations"], r["ebn0_db"]):
            (r["frames"], r["frame_errors"], r["bit_errors"], round(r["mean_iterations"] * r["frames"]))
            for r in rows}


@pytest.fixture(scope="session")
def row_counts():
    return counts


@pytest.fixture
def quick_campaign(backend, tmp_path):
    """``quick_campaign(module, what, *args)``: a bench campaign script's ``main(["--quick", ...])``
    on the fastest CPU backend into ``tmp_path``; returns its JSON document
    (``*-<what>-quick.json``), after checking that the plot beside it was drawn."""
    def run(module, what, *args):
        module.main(["--quick", "--backend", backend, "--out", str(tmp_path), *args])
        (path,) = tmp_path.glob(f"*-{what}-quick.json")
        assert path.with_suffix(".png").stat().st_size > 10_000
        return json.loads(path.read_text())

    return run
