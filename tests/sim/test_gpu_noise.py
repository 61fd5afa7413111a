"""GPU batches equal their CPU regeneration (kernels/sim_noise.cu vs gpuldpc.sim.frames); needs a GPU."""
import numpy as np
import pytest

import gpuldpc as gl
from gpuldpc.sim.frames import Transmitter

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def gpu():
    drv = pytest.importorskip("pycuda.driver")
    try:
        drv.init()
        if drv.Device.count() < 1:
            pytest.skip("no CUDA device")
    except drv.Error as exc:
        pytest.skip(f"no usable CUDA driver: {exc}")
    from gpuldpc.sim.gpu_channel import DeviceTransmitter

    return DeviceTransmitter


@pytest.mark.parametrize("code", [gl.codes.get("wifi-648-1/2"), gl.codes.get("wimax-2304-1/2")],
                         ids=lambda c: c.name)
@pytest.mark.parametrize("ebn0, batch, frames", [(1.0, 0, 37), (2.5, 123456789, 64)])
def test_binary_batch_equals_cpu(gpu, code, ebn0, batch, frames):
    host = Transmitter(code, 9)
    device = gpu(host)
    got = device.llr_host(ebn0, batch, frames).copy()
    want = host.llr(ebn0, batch, frames)
    assert got.shape == want.shape
    # logf/sincosf and numpy's float32 log/sin/cos differ by an ulp now and then (about 1 value
    # in 10 on a host emulation of the kernel): equal to float32 rounding, mostly bit-identical
    assert np.allclose(got, want, rtol=2e-6, atol=1e-6)
    assert np.mean(got == want) > 0.7


@pytest.mark.parametrize("name", ["gf16-300-150", "gf64-1512-1325"])
def test_nb_batch_equals_cpu(gpu, name):
    code = gl.codes.get(name)
    host = Transmitter(code, 9)
    got = gpu(host).llr_host(3.5, 7, 5).copy()
    want = host.llr(3.5, 7, 5)
    assert got.shape == (5, code.n, code.q)
    assert np.allclose(got, want, rtol=5e-6, atol=1e-5)
    assert (got.min(axis=2) == 0).all()                     # 0 at the most likely symbol
