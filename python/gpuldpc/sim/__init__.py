"""BER/FER simulation campaigns: Python API of ``gpuldpc-sim`` (docs/sim.md).

::

    import gpuldpc.sim as gs
    spec = gs.CampaignSpec.make("wifi-648-1/2", "1:3:0.5", algorithms=["nms", "spa"], iterations=10,
                                max_errors=50, max_frames=100_000, seed=1)
    rows = gs.run_campaign(spec, "runs/wifi648")      # store + results.csv + plots; returns the CSV rows

Layers: :mod:`.spec` (validated arguments), :mod:`.noise` (counter-based Philox
streams), :mod:`.frames` (one batch on the CPU), :mod:`.gpu_channel` (one batch
on the GPU), :mod:`.worker` (the picklable unit of work), :mod:`.executors`
(in process, one process per GPU, Dask), :mod:`.store` (SQLite), :mod:`.stats`
(counted prefix, intervals), :mod:`.results` (CSV), :mod:`.plot`,
:mod:`.progress`, :mod:`.runner` (the loop) and :mod:`.cli`.
"""
from .frames import BatchCounts, Transmitter  # noqa: F401
from .plot import ReferenceCurve, plot_results, read_reference_curve  # noqa: F401
from .results import CSV_COLUMNS, read_csv, write_csv  # noqa: F401
from .runner import make_executor, run_campaign, write_outputs  # noqa: F401
from .spec import Budget, CampaignSpec, RunSpec, SimError, load_code, parse_ebn0  # noqa: F401
from .store import ResultsStore  # noqa: F401
from .worker import BatchTask, run_batch  # noqa: F401
