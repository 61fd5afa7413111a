#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: ACM loopback, WiMAX 2304 r1/2 and r5/6 and WiFi 1944 r2/3 PDU by PDU, BPSK over AWGN
# Author: gr-gpuldpc
# Description: ACM loopback: each PDU of payload bits goes out in one of three codes (the code index stream), is encoded, sent over BPSK/AWGN as LLRs, and decoded by one LDPC Decoder (PDU) that takes each PDU's code from its ldpc_code metadata; the payloads are checked
# GNU Radio version: 3.10.5.1

from gnuradio import analog
from gnuradio import blocks
from gnuradio import gpuldpc
from gnuradio import gr
from gnuradio.filter import firdes
from gnuradio.fft import window
import sys
import signal
from argparse import ArgumentParser
from gnuradio.eng_arg import eng_float, intx
from gnuradio import eng_notation
from gnuradio import pdu
import pmt, numpy as np
import math
import numpy as np




class acm_pdu_loopback(gr.top_block):

    def __init__(self, esn0_db=3.0, frames=1000):
        gr.top_block.__init__(self, "ACM loopback, WiMAX 2304 r1/2 and r5/6 and WiFi 1944 r2/3 PDU by PDU, BPSK over AWGN", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.esn0_db = esn0_db
        self.frames = frames

        ##################################################
        # Variables
        ##################################################
        self.sigma = sigma = math.sqrt(1.0 / (2.0 * 10 ** (esn0_db / 10)))
        self.payload_seed = payload_seed = 5
        self.codes = codes = ['wimax-2304-1/2', 'wimax-2304-5/6', 'wifi-1944-2/3']

        ##################################################
        # Blocks
        ##################################################

        self.schedule = analog.random_uniform_source_b(0, len(codes), 7)
        self.payloads = gpuldpc.payload_pdu_source(codes=codes, seed=payload_seed)
        self.head = blocks.head(gr.sizeof_char*1, frames)
        self.encoder = gpuldpc.ldpc_encoder_pdu(codes=codes, symbols=True)
        self.decoder = gpuldpc.ldpc_decoder_pdu(codes=codes, algorithm=None, schedule='layered',
            max_iterations=10, early_stop=True, backend='auto',
            positive_llr_bit=1, output='info', on_failure='pass', on_bad_llr='erase',
            llr_input='bit', output_format='symbols')
        self.check = gpuldpc.payload_check_pdu(seed=payload_seed)
        self.channel = pdu.pdu_lambda(lambda bits, noise=np.random.default_rng(42): (2.0 / sigma ** 2 * (2.0 * bits - 1.0 + sigma * noise.standard_normal(bits.size))).astype(np.float32), "UVEC", pmt.intern("key"))


        ##################################################
        # Connections
        ##################################################
        self.msg_connect((self.channel, 'pdu'), (self.decoder, 'in'))
        self.msg_connect((self.decoder, 'out'), (self.check, 'in'))
        self.msg_connect((self.encoder, 'out'), (self.channel, 'pdu'))
        self.msg_connect((self.payloads, 'out'), (self.encoder, 'in'))
        self.connect((self.head, 0), (self.payloads, 0))
        self.connect((self.schedule, 0), (self.head, 0))


    def get_esn0_db(self):
        return self.esn0_db

    def set_esn0_db(self, esn0_db):
        self.esn0_db = esn0_db
        self.set_sigma(math.sqrt(1.0 / (2.0 * 10 ** (self.esn0_db / 10))))

    def get_frames(self):
        return self.frames

    def set_frames(self, frames):
        self.frames = frames
        self.head.set_length(self.frames)

    def get_sigma(self):
        return self.sigma

    def set_sigma(self, sigma):
        self.sigma = sigma
        self.channel.set_fn(lambda bits, noise=np.random.default_rng(42): (2.0 / self.sigma ** 2 * (2.0 * bits - 1.0 + self.sigma * noise.standard_normal(bits.size))).astype(np.float32))

    def get_payload_seed(self):
        return self.payload_seed

    def set_payload_seed(self, payload_seed):
        self.payload_seed = payload_seed

    def get_codes(self):
        return self.codes

    def set_codes(self, codes):
        self.codes = codes



def argument_parser():
    description = "ACM loopback: each PDU of payload bits goes out in one of three codes (the code index stream), is encoded, sent over BPSK/AWGN as LLRs, and decoded by one LDPC Decoder (PDU) that takes each PDU's code from its ldpc_code metadata; the payloads are checked"
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--esn0-db", dest="esn0_db", type=eng_float, default=eng_notation.num_to_str(float(3.0)),
        help="Set Es/N0 (dB) [default=%(default)r]")
    parser.add_argument(
        "--frames", dest="frames", type=intx, default=1000,
        help="Set Frames [default=%(default)r]")
    return parser


def main(top_block_cls=acm_pdu_loopback, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(esn0_db=options.esn0_db, frames=options.frames)

    def sig_handler(sig=None, frame=None):
        tb.stop()
        tb.wait()

        sys.exit(0)

    signal.signal(signal.SIGINT, sig_handler)
    signal.signal(signal.SIGTERM, sig_handler)

    tb.start()

    tb.wait()


if __name__ == '__main__':
    main()
