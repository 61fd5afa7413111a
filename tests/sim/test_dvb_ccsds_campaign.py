"""bench/dvb_ccsds_campaign.py --quick on the CPU (issue 15 item 4; the GPU run is bench/gpu_all.sh
dvbfer): DVB-S2 short 1/2 and AR4JA k = 1024 r1/2 with layered min-sum at the family's alpha;
FER falls with Eb/N0 (within the binomial noise of the frames counted), starts near 1 and ends
below 1 %; Es/N0, the FER after BCH and the reference points are what the docstring says; a code
or decoder that fails is a note and the rest of the campaign still lands."""
import math

import numpy as np
import pytest

import gpuldpc as gl


@pytest.fixture(scope="module")
def campaign(bench_module):
    return bench_module("dvb_ccsds_campaign")


def test_quick_campaign_gives_falling_fer_curves(campaign, backend, quick_campaign):
    doc = quick_campaign(campaign, "dvbccsds-fer", "--seconds", "8")
    assert {"gpu", "driver", "commit", "date", "rows", "references", "gaps", "notes"} <= set(doc)
    assert doc["notes"] == [], doc["notes"]
    rows = doc["rows"]
    assert {r["code"] for r in rows} == {"dvbs2-short-1/2", "ccsds-ar4ja-1024-1/2"}
    for code in ("dvbs2-short-1/2", "ccsds-ar4ja-1024-1/2"):
        pts = sorted((r for r in rows if r["code"] == code), key=lambda r: r["ebn0_db"])
        assert len(pts) == campaign.QUICK_POINTS
        assert {r["label"] for r in pts} == {"gpuldpc nms layered"}
        for r in pts:
            assert r["api"] == "gl.Decoder" and r["backend"] == backend and r["iterations"] == 50
            assert r["frames"] > 0 and 0 <= r["frame_errors"] <= r["frames"]
            assert r["fer"] == r["frame_errors"] / r["frames"] and 0 <= r["ber"] <= r["fer"]
            assert 1 <= r["mean_iterations"] <= 50
            bits = 2 if code.startswith("dvbs2") else 1        # QPSK for DVB-S2, BPSK for CCSDS
            assert r["esn0_db"] == pytest.approx(r["ebn0_db"] + 10 * math.log10(bits * r["k"] / r["n"]), abs=1e-3)
        assert f"alpha {campaign.FAMILY_ALPHA[pts[0]['family']]}" in pts[0]["decoder"]
        fer = np.array([r["fer"] for r in pts])
        frames = np.array([r["frames"] for r in pts])
        noise = 3 * np.sqrt(np.maximum(fer * (1 - fer), 1 / frames) / frames)
        assert (np.diff(fer) <= noise[:-1] + noise[1:]).all(), (code, fer, frames)
        assert fer[0] > 0.9, (code, fer)              # the first point sits above the waterfall
        assert fer[-1] < 0.01, (code, fer)            # the last one below it
    for r in rows:                                    # BCH (t = 12 for short 1/2) only ever helps
        if r["family"] == "dvbs2":
            assert r["bch_t"] == 12 and r["frames_beyond_bch_t"] <= r["frame_errors"]
            assert r["fer_after_bch"] == r["frames_beyond_bch_t"] / r["frames"] <= r["fer"]
        else:
            assert "fer_after_bch" not in r
    # short frames have no published point; each code its capacity limit; the gaps name both codes
    assert {(x["code"], x["kind"]) for x in doc["references"]} == {
        ("dvbs2-short-1/2", "computed"), ("ccsds-ar4ja-1024-1/2", "computed")}
    assert sorted((g["code"], g["measure"], g["fer_target"]) for g in doc["gaps"]) == sorted(
        (c, m, t) for c, m in (("dvbs2-short-1/2", "fer"), ("dvbs2-short-1/2", "fer_after_bch"),
                               ("ccsds-ar4ja-1024-1/2", "fer")) for t in (1e-2, 1e-3))
    limits = {x["code"]: x["ebn0_db"] for x in doc["references"]}
    for g in doc["gaps"]:       # read where two measured points bracket the FER, above the capacity limit
        if g["ebn0_db"] is not None:
            assert g["gap_db_to_capacity"] == pytest.approx(g["ebn0_db"] - limits[g["code"]], abs=1e-3) > 0


def test_reference_points_and_capacity_limits(campaign):
    # BPSK/AWGN capacity limits (Eb/N0 dB): 0.187 at rate 1/2, -0.495 at 1/3, 1.059 at 2/3
    for rate, limit in ((1 / 2, 0.187), (1 / 3, -0.495), (2 / 3, 1.059)):
        assert campaign.bpsk_capacity_ebn0_db(rate) == pytest.approx(limit, abs=0.01)
    code = gl.codes.get("dvbs2-normal-3/5")
    cap, qef = campaign.references(code.name, code.k / code.n)
    assert qef["kind"] == "published" and qef["esn0_db"] == 2.23 and qef["fer"] == 1e-7
    assert qef["ebn0_db"] == pytest.approx(2.23 - 10 * math.log10(1.2), abs=1e-3)   # Es/N0 of QPSK at rate 3/5
    assert cap["kind"] == "computed" and cap["ebn0_db"] < qef["ebn0_db"]
    assert campaign.references("dvbs2-normal-1/2", 0.5)[1]["ebn0_db"] == 1.0
    assert [x["kind"] for x in campaign.references("ccsds-c2", 7136 / 8160)] == ["computed"]
    assert campaign.bch_t("dvbs2-normal-2/3") == 10 and campaign.bch_t("dvbs2-short-2/3") == 12
    assert campaign.bch_t("ccsds-c2") is None
    # log-linear crossing: 1e-1 at 1.0 dB, 1e-3 at 1.5 dB -> 1e-2 at 1.25 dB; none past a zero
    assert campaign.crossing([(0.5, 1.0), (1.0, 1e-1), (1.5, 1e-3)], 1e-2) == pytest.approx(1.25)
    assert campaign.crossing([(1.0, 1e-1), (1.5, 0.0)], 1e-2) is None


def test_failures_are_notes(campaign, monkeypatch, quick_campaign):
    """An unknown code name, a decoder that cannot be built and one whose decode raises: notes,
    no rows for them, the other curve measured, the JSON and the plot written."""
    real = gl.Decoder

    class Broken:
        backend = "cpu"

        def decode(self, llr):
            raise RuntimeError("kernel fault")

    def decoder(code, **kw):
        if code.name == "ccsds-ar4ja-1024-1/2":
            raise gl.BackendUnavailable("no kernel for this shape")
        return Broken() if code.name == "ccsds-ar4ja-1024-2/3" else real(code, **kw)

    monkeypatch.setattr(gl, "Decoder", decoder)
    doc = quick_campaign(campaign, "dvbccsds-fer", "--seconds", "2", "--codes", "dvbs2-short-1/2",
                         "ccsds-ar4ja-1024-1/2", "ccsds-ar4ja-1024-2/3", "dvbs2-bogus-1/2")
    assert {r["code"] for r in doc["rows"]} == {"dvbs2-short-1/2"}
    notes = doc["notes"]
    assert len(notes) == 3, notes
    assert any(n.startswith("ccsds-ar4ja-1024-1/2 nms layered") and "no kernel for this shape" in n for n in notes)
    assert any(n.startswith("ccsds-ar4ja-1024-2/3 gpuldpc nms layered at") and "kernel fault" in n for n in notes)
    assert any(n.startswith("dvbs2-bogus-1/2 skipped") for n in notes)
