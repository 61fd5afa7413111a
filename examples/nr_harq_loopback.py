#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: 5G NR HARQ loopback, k = 1000, E = 1200 per transmission
# Author: gr-gpuldpc
# Description: Loopback of a 5G NR code block sent twice (redundancy versions 0 and 2) over BPSK/AWGN: rv 0 decoded alone, and rv 0 + rv 2 soft-combined in one decoder
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




class nr_harq_loopback(gr.top_block):

    def __init__(self, ebn0_db=3.0, frames=500):
        gr.top_block.__init__(self, "5G NR HARQ loopback, k = 1000, E = 1200 per transmission", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.ebn0_db = ebn0_db
        self.frames = frames

        ##################################################
        # Variables
        ##################################################
        self.k = k = 1000
        self.e = e = 1200
        self.noise_voltage = noise_voltage = math.sqrt(2.0 / (2.0 * k / e * 10 ** (ebn0_db / 10)))

        ##################################################
        # Blocks
        ##################################################

        self.to_frames = blocks.stream_to_vector(gr.sizeof_char*1, k)
        self.to_bits_rv2 = blocks.vector_to_stream(gr.sizeof_char*1, e)
        self.to_bits_rv0 = blocks.vector_to_stream(gr.sizeof_char*1, e)
        self.soft_rv2 = digital.constellation_soft_decoder_cf(digital.constellation_bpsk().base())
        self.soft_rv0 = digital.constellation_soft_decoder_cf(digital.constellation_bpsk().base())
        self.side_by_side = blocks.interleave(gr.sizeof_float*e, 1)
        self.show = blocks.message_debug(True)
        self.pairs = blocks.stream_to_vector(gr.sizeof_float*e, 2)
        self.noise_rv2 = analog.noise_source_c(analog.GR_GAUSSIAN, noise_voltage, 43)
        self.noise_rv0 = analog.noise_source_c(analog.GR_GAUSSIAN, noise_voltage, 42)
        self.llr_rv2 = blocks.stream_to_vector(gr.sizeof_float*1, e)
        self.llr_rv0 = blocks.stream_to_vector(gr.sizeof_float*1, e)
        self.head = blocks.head(gr.sizeof_char*1, (k * frames))
        self.errors_rv0 = gpuldpc.error_counter(vlen=k, q=2, interval=1.0)
        self.errors_rv0.set_block_alias("rv0")
        self.errors_combined = gpuldpc.error_counter(vlen=k, q=2, interval=1.0)
        self.errors_combined.set_block_alias("rv0_rv2")
        self.encoder_rv2 = gpuldpc.ldpc_encoder(k=k, e=e, rv=2, bg=None, n_ref=None, qm=None)
        self.encoder_rv0 = gpuldpc.ldpc_encoder(k=k, e=e, rv=0, bg=None, n_ref=None, qm=None)
        self.decoder_rv0 = gpuldpc.ldpc_decoder(k=k, e=e, rv=0, bg=None, n_ref=None, qm=None, algorithm='nms', schedule='layered',
            max_iterations=10, early_stop=True, backend='auto',
            positive_llr_bit=1, output='info', on_failure='pass', on_bad_llr='erase',
            preset='throughput', batch=0, devices=None, streams=None,
            alpha=0.75, beta=0.5, stats_interval=1.0, precision='float32', frame_tags=True)
        self.decoder_combined = gpuldpc.ldpc_decoder(k=k, e=e, rv=[0, 2], bg=None, n_ref=None, qm=None, algorithm='nms', schedule='layered',
            max_iterations=10, early_stop=True, backend='auto',
            positive_llr_bit=1, output='info', on_failure='pass', on_bad_llr='erase',
            preset='throughput', batch=0, devices=None, streams=None,
            alpha=0.75, beta=0.5, stats_interval=1.0, precision='float32', frame_tags=True)
        self.channel_rv2 = blocks.add_vcc(1)
        self.channel_rv0 = blocks.add_vcc(1)
        self.bpsk_rv2 = digital.chunks_to_symbols_bc([-1, 1], 1)
        self.bpsk_rv0 = digital.chunks_to_symbols_bc([-1, 1], 1)
        self.bits = analog.random_uniform_source_b(0, 2, 1)


        ##################################################
        # Connections
        ##################################################
        self.msg_connect((self.errors_combined, 'counts'), (self.show, 'print'))
        self.msg_connect((self.errors_rv0, 'counts'), (self.show, 'print'))
        self.connect((self.bits, 0), (self.head, 0))
        self.connect((self.bpsk_rv0, 0), (self.channel_rv0, 0))
        self.connect((self.bpsk_rv2, 0), (self.channel_rv2, 0))
        self.connect((self.channel_rv0, 0), (self.soft_rv0, 0))
        self.connect((self.channel_rv2, 0), (self.soft_rv2, 0))
        self.connect((self.decoder_combined, 0), (self.errors_combined, 1))
        self.connect((self.decoder_rv0, 0), (self.errors_rv0, 1))
        self.connect((self.encoder_rv0, 0), (self.to_bits_rv0, 0))
        self.connect((self.encoder_rv2, 0), (self.to_bits_rv2, 0))
        self.connect((self.head, 0), (self.to_frames, 0))
        self.connect((self.llr_rv0, 0), (self.decoder_rv0, 0))
        self.connect((self.llr_rv0, 0), (self.side_by_side, 0))
        self.connect((self.llr_rv2, 0), (self.side_by_side, 1))
        self.connect((self.noise_rv0, 0), (self.channel_rv0, 1))
        self.connect((self.noise_rv2, 0), (self.channel_rv2, 1))
        self.connect((self.pairs, 0), (self.decoder_combined, 0))
        self.connect((self.side_by_side, 0), (self.pairs, 0))
        self.connect((self.soft_rv0, 0), (self.llr_rv0, 0))
        self.connect((self.soft_rv2, 0), (self.llr_rv2, 0))
        self.connect((self.to_bits_rv0, 0), (self.bpsk_rv0, 0))
        self.connect((self.to_bits_rv2, 0), (self.bpsk_rv2, 0))
        self.connect((self.to_frames, 0), (self.encoder_rv0, 0))
        self.connect((self.to_frames, 0), (self.encoder_rv2, 0))
        self.connect((self.to_frames, 0), (self.errors_combined, 0))
        self.connect((self.to_frames, 0), (self.errors_rv0, 0))


    def get_ebn0_db(self):
        return self.ebn0_db

    def set_ebn0_db(self, ebn0_db):
        self.ebn0_db = ebn0_db
        self.set_noise_voltage(math.sqrt(2.0 / (2.0 * self.k / self.e * 10 ** (self.ebn0_db / 10))))

    def get_frames(self):
        return self.frames

    def set_frames(self, frames):
        self.frames = frames
        self.head.set_length((self.k * self.frames))

    def get_k(self):
        return self.k

    def set_k(self, k):
        self.k = k
        self.set_noise_voltage(math.sqrt(2.0 / (2.0 * self.k / self.e * 10 ** (self.ebn0_db / 10))))
        self.head.set_length((self.k * self.frames))

    def get_e(self):
        return self.e

    def set_e(self, e):
        self.e = e
        self.set_noise_voltage(math.sqrt(2.0 / (2.0 * self.k / self.e * 10 ** (self.ebn0_db / 10))))

    def get_noise_voltage(self):
        return self.noise_voltage

    def set_noise_voltage(self, noise_voltage):
        self.noise_voltage = noise_voltage
        self.noise_rv0.set_amplitude(self.noise_voltage)
        self.noise_rv2.set_amplitude(self.noise_voltage)



def argument_parser():
    description = 'Loopback of a 5G NR code block sent twice (redundancy versions 0 and 2) over BPSK/AWGN: rv 0 decoded alone, and rv 0 + rv 2 soft-combined in one decoder'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--ebn0-db", dest="ebn0_db", type=eng_float, default=eng_notation.num_to_str(float(3.0)),
        help="Set Eb/N0 (dB) [default=%(default)r]")
    parser.add_argument(
        "--frames", dest="frames", type=intx, default=500,
        help="Set Frames [default=%(default)r]")
    return parser


def main(top_block_cls=nr_harq_loopback, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(ebn0_db=options.ebn0_db, frames=options.frames)

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
