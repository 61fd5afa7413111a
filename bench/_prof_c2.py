import cProfile, pstats, numpy as np, gpuldpc as gl
c = gl.codes.get("ccsds-c2")
dec = gl.Decoder(c, backend="cuda", max_iterations=10, early_stop=False)
b = dec.preferred_batch("throughput")
llr = gl.channel.transmit(c, c.encode(np.zeros((b, c.k), np.uint8)), 4.0, np.random.default_rng(1))
dec.decode(llr)
cProfile.run("dec.decode(llr)", "/tmp/p")
pstats.Stats("/tmp/p").sort_stats("tottime").print_stats(12)
