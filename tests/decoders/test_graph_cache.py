"""gpuldpc.cuda.graphs.GraphCache without a GPU (the driver's graph calls faked): a key's
first call runs its work, the second captures it and launches the graph, later ones only
launch it; work that fails under capture is run as usual and never captured again; clear()
destroys every graph."""
import pytest

from gpuldpc.cuda import graphs


class FakeApi:
    """The six driver entry points, recording their calls (handles are small integers)."""

    def __init__(self):
        self.calls, self.capturing, self.next = [], False, 100

    def _handle(self, out):
        self.next += 1
        out._obj.value = self.next

    def cuStreamBeginCapture_v2(self, stream, mode):
        self.calls.append(("begin", stream, mode))
        self.capturing = True
        return 0

    def cuStreamEndCapture(self, stream, graph):
        self.calls.append(("end", stream))
        self.capturing = False
        self._handle(graph)
        return 0

    def cuGraphInstantiateWithFlags(self, exe, graph, flags):
        self.calls.append(("instantiate", graph.value))
        self._handle(exe)
        return 0

    def cuGraphLaunch(self, exe, stream):
        self.calls.append(("launch", exe, stream))
        return 0

    def cuGraphExecDestroy(self, exe):
        self.calls.append(("destroy exec", exe))
        return 0

    def cuGraphDestroy(self, graph):
        self.calls.append(("destroy graph", graph.value))
        return 0


class Stream:
    handle = 7


@pytest.fixture
def api(monkeypatch):
    fake = FakeApi()
    monkeypatch.setattr(graphs, "_api", fake)
    return fake


def test_run_capture_then_launch(api):
    cache, ran = graphs.GraphCache(), []

    def enqueue():
        ran.append(api.capturing)

    for _ in range(4):
        cache.run(("one frame",), Stream(), enqueue)
    assert ran == [False, True]                        # run as usual, then only under capture
    names = [c[0] for c in api.calls]
    assert names == ["begin", "end", "instantiate", "destroy graph", "launch", "launch", "launch"]
    assert api.calls[0] == ("begin", 7, 2)             # the slot's stream, relaxed mode
    exe = api.calls[4][1]
    assert all(c == ("launch", exe, 7) for c in api.calls[4:])
    cache.run(("two frames",), Stream(), enqueue)      # another key: its own first run
    assert ran == [False, True, False]
    cache.clear()
    assert api.calls[-1] == ("destroy exec", exe)
    cache.run(("one frame",), Stream(), enqueue)       # forgotten: runs as usual again
    assert ran == [False, True, False, False]


def test_work_that_fails_under_capture_runs_as_usual_and_is_not_captured_again(api):
    cache, ran = graphs.GraphCache(), []

    def enqueue():
        if api.capturing:
            raise RuntimeError("operation not permitted when stream is capturing")
        ran.append("ran")

    for _ in range(4):
        cache.run("key", Stream(), enqueue)
    assert ran == ["ran"] * 4
    assert [c[0] for c in api.calls] == ["begin", "end", "destroy graph"]


def test_an_invalidated_capture_runs_the_work_as_usual(api, monkeypatch):
    cache, ran = graphs.GraphCache(), []

    def invalidated(stream, graph):             # CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, no graph
        api.capturing = False
        return 901

    monkeypatch.setattr(api, "cuStreamEndCapture", invalidated)
    for _ in range(3):
        cache.run("key", Stream(), lambda: ran.append(api.capturing))
    assert ran == [False, True, False, False]                  # 1st run, capture attempt, its rerun, 3rd run
    assert [c[0] for c in api.calls] == ["begin"] and cache._execs == {}


def test_a_failing_launch_names_the_call(api, monkeypatch):
    cache = graphs.GraphCache()
    monkeypatch.setattr(api, "cuGraphLaunch", lambda exe, stream: 700)
    cache.run("key", Stream(), lambda: None)
    with pytest.raises(graphs.GraphError, match="cuGraphLaunch failed: CUresult 700"):
        cache.run("key", Stream(), lambda: None)


def test_without_the_driver_library_nothing_is_captured(monkeypatch):
    monkeypatch.setattr(graphs, "_api", False)
    cache, ran = graphs.GraphCache(), []
    for _ in range(3):
        cache.run("key", Stream(), lambda: ran.append(1))
    assert ran == [1, 1, 1]

