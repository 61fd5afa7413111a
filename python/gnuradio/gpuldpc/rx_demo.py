"""Receive chain over the committed SigMF recording, headless (the README's first command).

    python -m gnuradio.gpuldpc.rx_demo [--recording PATH.sigmf-meta] [--backend auto]

Flowgraph (the same as ``examples/rx_recording.grc``)::

    file source (cf32 SigMF data) -> bpsk_frame_receiver (FLL, symbol sync,
    Costas, frame sync) -> ldpc_decoder (positive_llr_bit=0) -> payload_check

The recording's ``ldpc:`` metadata says which code, payload seed and frame
count to expect.  Prints frames decoded, FER, BER, lost frames, the decoder's
throughput and the backend used; exits with status 1 when a frame is missing
or wrong.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from gnuradio import blocks, gr

from .decoder_blocks import ldpc_decoder
from .payload_check import payload_check
from .receiver import bpsk_frame_receiver

RECORDING = "wifi1944_bpsk.sigmf-meta"
_SEARCH = (
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "data"),  # source tree
    os.path.join(sys.prefix, "share", "gpuldpc", "examples", "data"),               # installed
    # CMake into GNU Radio's prefix: <prefix>/lib/python3.X/dist-packages/gnuradio/gpuldpc
    os.path.join(os.path.dirname(__file__), *[".."] * 5, "share", "gpuldpc", "examples", "data"),
)


def default_recording() -> str:
    """The committed recording: in the source tree, else under ``<prefix>/share/gpuldpc``."""
    for folder in _SEARCH:
        path = os.path.abspath(os.path.join(folder, RECORDING))
        if os.path.isfile(path):
            return path
    raise FileNotFoundError(f"{RECORDING} not found in {', '.join(map(os.path.abspath, _SEARCH))}; "
                            "pass --recording PATH.sigmf-meta")


def read_meta(meta_path: str) -> dict:
    """The ``global`` object of a SigMF meta file, checked for the ``ldpc:`` keys the chain needs."""
    with open(meta_path) as f:
        meta = json.load(f)["global"]
    if meta.get("core:datatype") != "cf32_le":
        raise ValueError(f"{meta_path}: core:datatype must be cf32_le, got {meta.get('core:datatype')!r}")
    missing = [key for key in ("ldpc:code", "ldpc:n", "ldpc:k", "ldpc:payload_seed", "ldpc:frame_count",
                               "ldpc:samples_per_symbol", "ldpc:rrc_rolloff") if key not in meta]
    if missing:
        raise ValueError(f"{meta_path}: SigMF metadata lacks {', '.join(missing)}")
    return meta


class recording_receiver(gr.top_block):
    """The receive chain over one recording; ``check`` and ``decoder`` hold the results."""

    def __init__(self, meta_path: str, backend: str = "auto", **decoder_args):
        gr.top_block.__init__(self, "recording_receiver")
        meta = read_meta(meta_path)
        self.meta = meta
        data_path = meta_path[: -len(".sigmf-meta")] + ".sigmf-data"
        self.source = blocks.file_source(gr.sizeof_gr_complex, data_path, False)
        self.receiver = bpsk_frame_receiver(meta["ldpc:n"], meta["ldpc:samples_per_symbol"],
                                            meta["ldpc:rrc_rolloff"])
        self.decoder = ldpc_decoder(meta["ldpc:code"], backend=backend, positive_llr_bit=0,
                                    **decoder_args)
        self.check = payload_check(meta["ldpc:k"], meta["ldpc:payload_seed"])
        self.connect(self.source, self.receiver, self.decoder, self.check)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recording", help="SigMF .sigmf-meta file (default: the committed one)")
    parser.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu", "reference"))
    parser.add_argument("--max-iterations", type=int, default=10)
    args = parser.parse_args(argv)
    meta_path = args.recording or default_recording()
    # GNU Radio warns about buffer alignment of the large vector items; nothing to act on
    gr.logging().set_default_level(gr.log_levels.err)
    tb = recording_receiver(meta_path, args.backend, max_iterations=args.max_iterations)
    start = time.perf_counter()
    tb.run()
    wall = time.perf_counter() - start
    c, stats, meta = tb.check.counts, tb.decoder.stats(), tb.meta
    expected = meta["ldpc:frame_count"]
    lost = expected - c.frames + c.missing
    print(f"recording   {meta_path}")
    print(f"code        {meta['ldpc:code']}  ({stats['backend']} backend, "
          f"{tb.decoder.batch} frames per batch)")
    print(f"frames      {c.frames} decoded of {expected} sent, {lost} lost, "
          f"{c.out_of_order} out of order, {stats['failures']} failed the syndrome check")
    print(f"errors      FER {c.fer:.3g} ({c.frame_errors}/{c.frames}), "
          f"BER {c.ber:.3g} ({c.bit_errors}/{c.frames * meta['ldpc:k']} info bits)")
    print(f"iterations  {stats['mean_iterations']:.2f} mean")
    print(f"throughput  decoder {stats['coded_mbps']:.1f} Mb/s coded; whole chain "
          f"{c.frames * meta['ldpc:n'] / wall / 1e6:.2f} Mb/s coded ({wall:.2f} s wall)")
    return 0 if lost == 0 and c.frame_errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
