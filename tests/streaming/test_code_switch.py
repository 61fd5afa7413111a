"""CodeSwitch (the PDU blocks' choice of code by ``ldpc_code``) and merged_stats, without GNU Radio."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.code_switch import CodeSwitch, merged_stats
from gpuldpc.streaming import StreamDecoder


def test_select_by_listed_name_own_name_and_index():
    switch = CodeSwitch(["wifi-648-1/2", "nr-k100-e200"], lambda code: code.n)
    nr = gl.codes.nr(100, 200)
    assert switch.names == ["wifi-648-1/2", "nr-k100-e200"]
    assert switch.select("nr-k100-e200") == ("nr-k100-e200", 200)
    assert switch.select(nr.name) == ("nr-k100-e200", 200)            # the code's own name
    assert switch.select(0) == ("wifi-648-1/2", 648)
    assert switch.select(b"wifi-648-1/2") == ("wifi-648-1/2", 648)
    for key, message in ((None, "no 'ldpc_code' entry in the metadata"),
                         ("wifi-648-2/3", r"ldpc_code='wifi-648-2/3' is neither one of the codes"),
                         (2, r"ldpc_code=2 is neither .* nor an index 0\.\.1"), (1.0, "ldpc_code=1.0")):
        with pytest.raises(ValueError, match=message):
            switch.select(key)
    one = CodeSwitch(["wifi-648-1/2"], lambda code: code.k)
    assert one.select(None) == ("wifi-648-1/2", 324)


def test_bad_lists():
    for codes, message in (([], "non-empty list"), ("wifi-648-1/2", "non-empty list"),
                           (["wifi-648-1/2", gl.codes.get("wifi-648-1/2")], r"\['wifi-648-1/2'\] given more than once")):
        with pytest.raises(ValueError, match=message):
            CodeSwitch(codes, lambda code: None)


def test_merged_stats_of_two_decoders():
    """Sums, iterations weighted by frames, coded Mb/s over the decoders' busy time together."""
    decoders = [StreamDecoder(name, backend="reference", positive_llr_bit=0) for name in ("wifi-648-1/2", "wifi-1296-1/2")]
    rng = np.random.default_rng(1)
    for dec, frames in zip(decoders, (3, 2)):
        code = dec.code
        dec.decode_frames(gl.channel.transmit(code, code.encode(rng.integers(0, 2, (frames, code.k))), 3.0, rng))
    each = [d.stats() for d in decoders]
    got = merged_stats(decoders)
    assert (got["frames"], got["failures"], got["backend"], got["fallbacks"]) == (5, 0, "reference", 0)
    assert got["mean_iterations"] == pytest.approx((3 * each[0]["mean_iterations"] + 2 * each[1]["mean_iterations"]) / 5)
    busy = 3 * 648 / each[0]["coded_mbps"] + 2 * 1296 / each[1]["coded_mbps"]
    assert got["coded_mbps"] == pytest.approx((3 * 648 + 2 * 1296) / busy)
