"""bench/nb_tmm_fer.py (issue 17 item 3): T-MM and T-MM from first minima only ("tmm1") against
Min-Max on the same frames, the loss read log-linearly at FER 1e-2 and 1e-3; --quick on the CPU."""
import pytest


@pytest.fixture(scope="module")
def campaign(bench_module):
    return bench_module("nb_tmm_fer")


def test_quick_campaign_decodes_the_same_frames_with_every_decoder(campaign, quick_campaign):
    doc = quick_campaign(campaign, "tmm-fer")
    assert doc["notes"] == [], doc["notes"]
    def trellis(code):
        return [f"gpuldpc {rule} alpha {alpha}" for rule in ("tmm", "tmm1")
                for alpha in (0.75, campaign.BEST_ALPHA[code])]

    for code, points in campaign.CURVES.items():
        rows = [r for r in doc["rows"] if r["code"] == code]
        assert {r["label"] for r in rows} == {"gpuldpc minmax layered", *trellis(code)}
        for ebn0 in points[2:4]:
            at = [r for r in rows if r["ebn0_db"] == ebn0]
            assert len(at) == 5 and len({r["frames"] for r in at}) == 1 and at[0]["frames"] == 400
            assert all(r["fer"] == r["frame_errors"] / 400 for r in at)
    assert sorted((x["code"], x["label"], x["fer"]) for x in doc["losses"]) == sorted(
        (code, label, fer) for code in campaign.CURVES for label in trellis(code) for fer in (1e-2, 1e-3))


def test_loss_is_the_distance_of_the_crossings(campaign):
    rows = [dict(code="c", label=label, ebn0_db=x, fer=f) for label, pts in (
        ("gpuldpc minmax layered", ((1.0, 1e-1), (1.5, 1e-3))),        # 1e-2 at 1.25 dB, 1e-3 at 1.5
        ("gpuldpc tmm alpha 0.6", ((1.0, 1e-1), (1.5, 1e-2), (2.0, 1e-4)))) for x, f in pts]
    got = {x["fer"]: x for x in campaign.losses(rows)}
    assert got[1e-2]["ebn0_db"] == 1.5 and got[1e-2]["minmax_ebn0_db"] == 1.25 and got[1e-2]["loss_db"] == 0.25
    assert got[1e-3]["ebn0_db"] == 1.75 and got[1e-3]["loss_db"] == 0.25
