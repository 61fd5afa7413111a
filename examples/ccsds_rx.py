#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: CCSDS AR4JA or C2, BPSK over AWGN
# Author: gr-gpuldpc
# Description: CCSDS 131.0-B loopback (--code: an AR4JA code, default k = 1024 rate 1/2, or ccsds-c2): random bits -> LDPC Encoder -> BPSK -> AWGN -> LLRs -> LDPC Decoder (punctured columns, C2's fill and appended bits restored) -> bit error counts
# GNU Radio version: 3.10.5.1

from gnuradio import analog
from gnuradio import blocks
from gnuradio import digital
from gnuradio import gpuldpc
from gnuradio import gr
from gnuradio.filter import firdes
from gnuradio.fft import window
import sys
import signal
from argparse import ArgumentParser
from gnuradio.eng_arg import eng_float, intx
from gnuradio import eng_notation
import math




class ccsds_rx(gr.top_block):

    def __init__(self, code='ccsds-ar4ja-1024-1/2', ebn0_db=2.0, frames=500):
        gr.top_block.__init__(self, "CCSDS AR4JA or C2, BPSK over AWGN", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.code = code
        self.ebn0_db = ebn0_db
        self.frames = frames

        ##################################################
        # Variables
        ##################################################
        self.n = n = gpuldpc.load_code(code).n
        self.k = k = gpuldpc.load_code(code).k
        self.noise_voltage = noise_voltage = math.sqrt(2.0 / (2.0 * k / n * 10 ** (ebn0_db / 10)))
        self.llr_scale = llr_scale = 4.0 / noise_voltage ** 2

        ##################################################
        # Blocks
        ##################################################

        self.to_real = blocks.complex_to_real(1)
        self.to_llr_frames = blocks.stream_to_vector(gr.sizeof_float*1, n)
        self.to_frames = blocks.stream_to_vector(gr.sizeof_char*1, k)
        self.to_bits = blocks.vector_to_stream(gr.sizeof_char*1, n)
        self.show = blocks.message_debug(True)
        self.noise = analog.noise_source_c(analog.GR_GAUSSIAN, noise_voltage, 42)
        self.llr = blocks.multiply_const_ff(llr_scale)
        self.head = blocks.head(gr.sizeof_char*1, (k * frames))
        self.errors = gpuldpc.error_counter(vlen=k, q=2, interval=1.0)
        self.errors.set_block_alias("info_errors")
        self.encoder = gpuldpc.ldpc_encoder(code=code)
        self.decoder = gpuldpc.ldpc_decoder(code=code, algorithm='spa', schedule='layered',
            max_iterations=50, early_stop=True, backend='auto',
            positive_llr_bit=1, output='info', on_failure='pass', on_bad_llr='erase',
            preset='throughput', batch=0, devices=None, streams=None,
            alpha=0.75, beta=0.5, stats_interval=1.0, precision='float32', frame_tags=True)
        self.channel = blocks.add_vcc(1)
        self.bpsk = digital.chunks_to_symbols_bc([-1, 1], 1)
        self.bits = analog.random_uniform_source_b(0, 2, 1)


        ##################################################
        # Connections
        ##################################################
        self.msg_connect((self.decoder, 'stats'), (self.show, 'print'))
        self.msg_connect((self.errors, 'counts'), (self.show, 'print'))
        self.connect((self.bits, 0), (self.head, 0))
        self.connect((self.bpsk, 0), (self.channel, 0))
        self.connect((self.channel, 0), (self.to_real, 0))
        self.connect((self.decoder, 0), (self.errors, 1))
        self.connect((self.encoder, 0), (self.to_bits, 0))
        self.connect((self.head, 0), (self.to_frames, 0))
        self.connect((self.llr, 0), (self.to_llr_frames, 0))
        self.connect((self.noise, 0), (self.channel, 1))
        self.connect((self.to_bits, 0), (self.bpsk, 0))
        self.connect((self.to_frames, 0), (self.encoder, 0))
        self.connect((self.to_frames, 0), (self.errors, 0))
        self.connect((self.to_llr_frames, 0), (self.decoder, 0))
        self.connect((self.to_real, 0), (self.llr, 0))


    def get_code(self):
        return self.code

    def set_code(self, code):
        self.code = code
        self.set_k(gpuldpc.load_code(self.code).k)
        self.set_n(gpuldpc.load_code(self.code).n)

    def get_ebn0_db(self):
        return self.ebn0_db

    def set_ebn0_db(self, ebn0_db):
        self.ebn0_db = ebn0_db
        self.set_noise_voltage(math.sqrt(2.0 / (2.0 * self.k / self.n * 10 ** (self.ebn0_db / 10))))

    def get_frames(self):
        return self.frames

    def set_frames(self, frames):
        self.frames = frames
        self.head.set_length((self.k * self.frames))

    def get_n(self):
        return self.n

    def set_n(self, n):
        self.n = n
        self.set_noise_voltage(math.sqrt(2.0 / (2.0 * self.k / self.n * 10 ** (self.ebn0_db / 10))))

    def get_k(self):
        return self.k

    def set_k(self, k):
        self.k = k
        self.set_noise_voltage(math.sqrt(2.0 / (2.0 * self.k / self.n * 10 ** (self.ebn0_db / 10))))
        self.head.set_length((self.k * self.frames))

    def get_noise_voltage(self):
        return self.noise_voltage

    def set_noise_voltage(self, noise_voltage):
        self.noise_voltage = noise_voltage
        self.set_llr_scale(4.0 / self.noise_voltage ** 2)
        self.noise.set_amplitude(self.noise_voltage)

    def get_llr_scale(self):
        return self.llr_scale

    def set_llr_scale(self, llr_scale):
        self.llr_scale = llr_scale
        self.llr.set_k(self.llr_scale)



def argument_parser():
    description = "CCSDS 131.0-B loopback (--code: an AR4JA code, default k = 1024 rate 1/2, or ccsds-c2): random bits -> LDPC Encoder -> BPSK -> AWGN -> LLRs -> LDPC Decoder (punctured columns, C2's fill and appended bits restored) -> bit error counts"
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--code", dest="code", type=str, default='ccsds-ar4ja-1024-1/2',
        help="Set Code [default=%(default)r]")
    parser.add_argument(
        "--ebn0-db", dest="ebn0_db", type=eng_float, default=eng_notation.num_to_str(float(2.0)),
        help="Set Eb/N0 (dB) [default=%(default)r]")
    parser.add_argument(
        "--frames", dest="frames", type=intx, default=500,
        help="Set Frames [default=%(default)r]")
    return parser


def main(top_block_cls=ccsds_rx, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(code=options.code, ebn0_db=options.ebn0_db, frames=options.frames)

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
