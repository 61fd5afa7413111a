"""bench/nr_campaign.py --quick on the CPU (issue 14 item 5; the GPU run is bench/gpu_all.sh nrfer):
both base graphs, our layered NMS and flooding SPA on the same LLRs, Sionna skipped with its
reason where it is not installed; FER falls with Eb/N0 (within the binomial noise of the
frames counted), starts near 1 and ends below 1 %; the JSON and the plot are written."""
import numpy as np
import pytest


@pytest.fixture(scope="module")
def nr_campaign(bench_module):
    return bench_module("nr_campaign")


def test_quick_campaign_gives_falling_fer_curves(nr_campaign, backend, quick_campaign):
    doc = quick_campaign(nr_campaign, "nrfer", "--seconds", "12")
    rows = doc["rows"]
    labels = {"gpuldpc nms layered", "gpuldpc spa flooding"}
    if not any(r["api"] == "sionna LDPC5GDecoder" for r in rows):
        assert any(n.startswith("sionna skipped") for n in doc["notes"]), doc["notes"]
    curves = {(r["code"], r["label"]) for r in rows if r["label"] in labels}
    assert {c for c, _ in curves} == {"nr-bg1-z48-k1056-e1584-rv0", "nr-bg2-z60-k480-e1440-rv0"}
    assert len(curves) == 4
    for code, label in curves:
        pts = sorted((r for r in rows if (r["code"], r["label"]) == (code, label)), key=lambda r: r["ebn0_db"])
        assert len(pts) == nr_campaign.QUICK_POINTS
        for r in pts:
            assert r["frames"] > 0 and 0 <= r["frame_errors"] <= r["frames"]
            assert r["fer"] == r["frame_errors"] / r["frames"] and 0 <= r["ber"] <= r["fer"]
            assert r["api"] == "gl.Decoder" and r["backend"] == backend and r["iterations"] == 10
        fer = np.array([r["fer"] for r in pts])
        frames = np.array([r["frames"] for r in pts])
        noise = 3 * np.sqrt(np.maximum(fer * (1 - fer), 1 / frames) / frames)
        assert (np.diff(fer) <= noise[:-1] + noise[1:]).all(), (code, label, fer, frames)
        assert fer[0] > 0.9, (code, label, fer)            # the first point sits above the waterfall
        assert fer[-1] < 0.01, (code, label, fer)          # the last one below it
