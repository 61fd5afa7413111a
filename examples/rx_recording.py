#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: LDPC receive chain over recorded IQ (WiFi 1944 r1/2, BPSK)
# Author: gr-gpuldpc
# Description: Receive chain over the committed SigMF recording: file source -> FLL, clock sync, Costas loop, frame sync -> LDPC decoder -> payload check. Run from examples/ (or give --recording).
# GNU Radio version: 3.10.5.1

from gnuradio import blocks
import pmt
from gnuradio import gpuldpc
import math
from gnuradio import gr
from gnuradio.filter import firdes
from gnuradio.fft import window
import sys
import signal
from argparse import ArgumentParser
from gnuradio.eng_arg import eng_float, intx
from gnuradio import eng_notation




class rx_recording(gr.top_block):

    def __init__(self, recording='data/wifi1944_bpsk.sigmf-data', payload_seed=1829338325):
        gr.top_block.__init__(self, "LDPC receive chain over recorded IQ (WiFi 1944 r1/2, BPSK)", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.recording = recording
        self.payload_seed = payload_seed

        ##################################################
        # Variables
        ##################################################
        self.sps = sps = 2
        self.code = code = 'wifi-1944-1/2'

        ##################################################
        # Blocks
        ##################################################

        self.source = blocks.file_source(gr.sizeof_gr_complex*1, recording, False, 0, 0)
        self.source.set_begin_tag(pmt.PMT_NIL)
        self.show = blocks.message_debug(True)
        self.receiver = gpuldpc.bpsk_frame_receiver(n=gpuldpc.load_code(code).n, sps=sps, rolloff=0.35, fll_bw=(2*math.pi/500),
            timing_bw=(2*math.pi/200), costas_bw=(2*math.pi/200), threshold=0.6)
        self.decoder = gpuldpc.ldpc_decoder(code=code, algorithm='nms', schedule='layered',
            max_iterations=10, early_stop=True, backend='auto',
            positive_llr_bit=0, output='info', on_failure='pass', on_bad_llr='erase',
            preset='latency', batch=0, devices=None, streams=None,
            alpha=0.75, beta=0.5, stats_interval=1.0, precision='float32', frame_tags=True)
        self.check = gpuldpc.payload_check(k=gpuldpc.load_code(code).k, seed=payload_seed)


        ##################################################
        # Connections
        ##################################################
        self.msg_connect((self.decoder, 'stats'), (self.show, 'print'))
        self.connect((self.decoder, 0), (self.check, 0))
        self.connect((self.receiver, 0), (self.decoder, 0))
        self.connect((self.source, 0), (self.receiver, 0))


    def get_recording(self):
        return self.recording

    def set_recording(self, recording):
        self.recording = recording
        self.source.open(self.recording, False)

    def get_payload_seed(self):
        return self.payload_seed

    def set_payload_seed(self, payload_seed):
        self.payload_seed = payload_seed

    def get_sps(self):
        return self.sps

    def set_sps(self, sps):
        self.sps = sps

    def get_code(self):
        return self.code

    def set_code(self, code):
        self.code = code



def argument_parser():
    description = 'Receive chain over the committed SigMF recording: file source -> FLL, clock sync, Costas loop, frame sync -> LDPC decoder -> payload check. Run from examples/ (or give --recording).'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--recording", dest="recording", type=str, default='data/wifi1944_bpsk.sigmf-data',
        help="Set Recording (.sigmf-data) [default=%(default)r]")
    parser.add_argument(
        "--payload-seed", dest="payload_seed", type=intx, default=1829338325,
        help="Set Payload seed [default=%(default)r]")
    return parser


def main(top_block_cls=rx_recording, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(recording=options.recording, payload_seed=options.payload_seed)

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
