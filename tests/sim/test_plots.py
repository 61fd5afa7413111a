"""Plot files exist and hold one series per run and per reference curve, with the CSV's values."""
import re

import numpy as np

from gpuldpc.sim import CampaignSpec, plot_results, read_csv, read_reference_curve, run_campaign
from gpuldpc.sim.cli import main
from gpuldpc.sim.plot import series_id


def test_plots_overlay_runs_and_reference(small_args, tmp_path):
    ref = tmp_path / "aff3ct_fer.txt"
    ref.write_text("# Eb/N0  FER\nebn0 fer\n1.0, 0.5\n2.0 0.02   # comment\n3.0 0.0\n")
    spec = CampaignSpec.make(**{**small_args, "algorithms": ["nms", "oms"]})
    run_campaign(spec, tmp_path, progress=False, references=[read_reference_curve(ref)])
    assert (tmp_path / "error_rates.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "error_rates.svg").read_text()
    ids = set(re.findall(r'<g id="((?:fer|ber|ref)-[^"]+)"', svg))
    runs = ["wifi-648-1/2 nms layered 10 it", "wifi-648-1/2 oms layered 10 it"]
    assert ids == {series_id(k, r) for k in ("fer", "ber") for r in runs} | {"ref-fer-aff3ct_fer"}

    rows = read_csv(tmp_path / "results.csv")
    fig = plot_results(rows, references=[read_reference_curve(ref)])
    ax_ber, ax_fer = fig.axes
    lines = {line.get_gid(): line for line in ax_fer.lines if line.get_gid()}
    for run in runs:
        mine = sorted((r for r in rows if f"{r['code']} {r['algorithm']} {r['schedule']} {r['iterations']} it"
                       == run and r["fer"] > 0), key=lambda r: r["ebn0_db"])
        x, y = lines[series_id("fer", run)].get_data()
        assert np.allclose(x, [r["ebn0_db"] for r in mine]) and np.allclose(y, [r["fer"] for r in mine])
    x, y = lines["ref-fer-aff3ct_fer"].get_data()
    assert list(x) == [1.0, 2.0] and list(y) == [0.5, 0.02]                  # FER 0 is not drawn on log axes
    assert ax_ber.get_yscale() == "log" and ax_fer.get_xlabel() == "Eb/N0 (dB)"


def test_show_rewrites_csv_and_plots_from_the_store(small_spec, tmp_path, capsys):
    rows = run_campaign(small_spec, tmp_path, progress=False)
    for name in ("results.csv", "error_rates.png", "error_rates.svg"):
        (tmp_path / name).unlink()
    assert main(["--show", "--out", str(tmp_path)]) == 0
    assert read_csv(tmp_path / "results.csv") == read_csv_rows(rows)
    assert (tmp_path / "error_rates.svg").is_file() and (tmp_path / "error_rates.png").is_file()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["code", "alg", "it", "Eb/N0", "frames", "fe", "FER", "BER", "iter", "fr/s",
                                "status"]
    assert [line.split()[3:6] for line in table[1:]] == [[f"{r['ebn0_db']:.2f}", str(r["frames"]),
                                                          str(r["frame_errors"])] for r in rows]


def read_csv_rows(rows):
    """Rows as read back from a CSV (floats written with 6 significant digits)."""
    return [{k: (float(f"{v:.6g}") if isinstance(v, float) else v) for k, v in r.items()} for r in rows]
