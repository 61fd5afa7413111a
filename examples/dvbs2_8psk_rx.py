#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: DVB-S2 8PSK 3/5 short frames, gr-dtv transmitter, soft demapper, GPU LDPC and BCH receiver
# Author: gr-gpuldpc
# Description: DVB-S2 8PSK receive chain: random BBFRAME bits -> gr-dtv BCH and LDPC encoders, bit interleaver and 8PSK modulator (short frames, rate 3/5) -> AWGN -> DVB-S2 Soft Demapper (exact LLRs, interleaver undone) -> LDPC Decoder -> DVB-S2 BCH Decoder -> bit error counts
# GNU Radio version: 3.10.5.1

from gnuradio import analog
from gnuradio import blocks
from gnuradio import dtv
from gnuradio import gpuldpc
from gnuradio import gr
from gnuradio.filter import firdes
from gnuradio.fft import window
import sys
import signal
from argparse import ArgumentParser
from gnuradio.eng_arg import eng_float, intx
from gnuradio import eng_notation




class dvbs2_8psk_rx(gr.top_block):

    def __init__(self, esn0_db=6.0, frames=100):
        gr.top_block.__init__(self, "DVB-S2 8PSK 3/5 short frames, gr-dtv transmitter, soft demapper, GPU LDPC and BCH receiver", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.esn0_db = esn0_db
        self.frames = frames

        ##################################################
        # Variables
        ##################################################
        self.code = code = 'dvbs2-short-3/5'
        self.noise_voltage = noise_voltage = 10 ** (-esn0_db / 20)
        self.k_bch = k_bch = gpuldpc.bch_lengths(code)[1]

        ##################################################
        # Blocks
        ##################################################

        self.show = blocks.message_debug(True)
        self.sent_frames = blocks.stream_to_vector(gr.sizeof_char*1, k_bch)
        self.noise = analog.noise_source_c(analog.GR_GAUSSIAN, noise_voltage, 42)
        self.modulator = dtv.dvbs2_modulator_bc(
            dtv.FECFRAME_SHORT,
            dtv.C3_5,
            dtv.MOD_8PSK,
            dtv.INTERPOLATION_OFF)
        self.ldpc_encoder = dtv.dvb_ldpc_bb(
            dtv.STANDARD_DVBS2,
            dtv.FECFRAME_SHORT,
            dtv.C3_5,
            dtv.MOD_OTHER)
        self.interleaver = dtv.dvbs2_interleaver_bb(
            dtv.FECFRAME_SHORT,
            dtv.C3_5,
            dtv.MOD_8PSK)
        self.head = blocks.head(gr.sizeof_char*1, (k_bch * frames))
        self.errors = gpuldpc.error_counter(vlen=k_bch, q=2, interval=1.0)
        self.errors.set_block_alias("bbframe_errors")
        self.demapper = gpuldpc.dvbs2_demapper(code='dvbs2-short-3/5', constellation='8psk', esn0_db=esn0_db, max_log=False)
        self.decoder = gpuldpc.ldpc_decoder(code='dvbs2-short-3/5', algorithm='spa', schedule='layered',
            max_iterations=50, early_stop=True, backend='auto',
            positive_llr_bit=0, output='info', on_failure='pass', on_bad_llr='erase',
            preset='throughput', batch=0, devices=None, streams=None,
            alpha=0.75, beta=0.5, stats_interval=1.0, precision='float32', frame_tags=True)
        self.channel = blocks.add_vcc(1)
        self.bits = analog.random_uniform_source_b(0, 2, 1)
        self.bch_encoder = dtv.dvb_bch_bb(
            dtv.STANDARD_DVBS2,
            dtv.FECFRAME_SHORT,
            dtv.C3_5
            )
        self.bch_decoder = gpuldpc.dvbs2_bch_decoder(code='dvbs2-short-3/5', stats_interval=1.0)
        self.bch_decoder.set_block_alias("bch")


        ##################################################
        # Connections
        ##################################################
        self.msg_connect((self.bch_decoder, 'stats'), (self.show, 'print'))
        self.msg_connect((self.decoder, 'stats'), (self.show, 'print'))
        self.msg_connect((self.errors, 'counts'), (self.show, 'print'))
        self.connect((self.bch_decoder, 0), (self.errors, 1))
        self.connect((self.bch_encoder, 0), (self.ldpc_encoder, 0))
        self.connect((self.bits, 0), (self.head, 0))
        self.connect((self.channel, 0), (self.demapper, 0))
        self.connect((self.decoder, 0), (self.bch_decoder, 0))
        self.connect((self.demapper, 0), (self.decoder, 0))
        self.connect((self.head, 0), (self.bch_encoder, 0))
        self.connect((self.head, 0), (self.sent_frames, 0))
        self.connect((self.interleaver, 0), (self.modulator, 0))
        self.connect((self.ldpc_encoder, 0), (self.interleaver, 0))
        self.connect((self.modulator, 0), (self.channel, 0))
        self.connect((self.noise, 0), (self.channel, 1))
        self.connect((self.sent_frames, 0), (self.errors, 0))


    def get_esn0_db(self):
        return self.esn0_db

    def set_esn0_db(self, esn0_db):
        self.esn0_db = esn0_db
        self.set_noise_voltage(10 ** (-self.esn0_db / 20))
        self.demapper.set_esn0_db(self.esn0_db)

    def get_frames(self):
        return self.frames

    def set_frames(self, frames):
        self.frames = frames
        self.head.set_length((self.k_bch * self.frames))

    def get_code(self):
        return self.code

    def set_code(self, code):
        self.code = code
        self.set_k_bch(gpuldpc.bch_lengths(self.code)[1])

    def get_noise_voltage(self):
        return self.noise_voltage

    def set_noise_voltage(self, noise_voltage):
        self.noise_voltage = noise_voltage
        self.noise.set_amplitude(self.noise_voltage)

    def get_k_bch(self):
        return self.k_bch

    def set_k_bch(self, k_bch):
        self.k_bch = k_bch
        self.head.set_length((self.k_bch * self.frames))



def argument_parser():
    description = 'DVB-S2 8PSK receive chain: random BBFRAME bits -> gr-dtv BCH and LDPC encoders, bit interleaver and 8PSK modulator (short frames, rate 3/5) -> AWGN -> DVB-S2 Soft Demapper (exact LLRs, interleaver undone) -> LDPC Decoder -> DVB-S2 BCH Decoder -> bit error counts'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--esn0-db", dest="esn0_db", type=eng_float, default=eng_notation.num_to_str(float(6.0)),
        help="Set Es/N0 (dB) [default=%(default)r]")
    parser.add_argument(
        "--frames", dest="frames", type=intx, default=100,
        help="Set Frames [default=%(default)r]")
    return parser


def main(top_block_cls=dvbs2_8psk_rx, options=None):
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
