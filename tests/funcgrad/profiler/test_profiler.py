"""funcgrad.profiler: per-primitive counts equal the jaxpr's equation counts, self/total
times are consistent, PyTorch's table and Chrome trace format."""

from __future__ import annotations

import collections
import glob
import gzip
import json
import os

import numpy as np
import pytest
from helpers import dev, host

import funcgrad
import funcgrad.numpy as fnp
from funcgrad.core import current_trace, eval_trace
from funcgrad.profiler import EventList, profile, record_function


def assert_close(actual, desired, **kw):
    np.testing.assert_allclose(host(actual), host(desired), **kw)


def model(w, x):
    h = fnp.tanh(x @ w)
    return fnp.sum(h * h) + fnp.mean(h)


W = np.random.default_rng(0).normal(size=(4, 3))
X = np.random.default_rng(1).normal(size=(5, 4))


def _eqn_counts(closed):
    return collections.Counter(e.prim.name for e in closed.jaxpr.eqns)


def test_counts_equal_jaxpr_equations_under_jit():
    f = funcgrad.jit(model)
    closed = funcgrad.make_jaxpr(model)(W, X)
    with profile() as prof:
        f(W, X)
    counts = {e.key: e.count for e in prof.key_averages()}
    for name, n in _eqn_counts(closed).items():
        assert counts[name] == n, name
    assert counts["jit(model)"] == 1


def model_fnp(w, x):
    # Eagerly, operators between plain NumPy arrays are NumPy's own (funcgrad never sees
    # them); funcgrad.numpy functions are recorded.
    h = fnp.tanh(fnp.matmul(x, w))
    return fnp.add(fnp.sum(fnp.multiply(h, h)), fnp.mean(h))


def test_counts_equal_jaxpr_equations_eagerly():
    closed = funcgrad.make_jaxpr(model_fnp)(W, X)
    with profile() as prof:
        model_fnp(W, X)
    counts = {e.key: e.count for e in prof.key_averages()}
    assert counts == dict(_eqn_counts(closed))


def test_grad_backward_ops_recorded_and_values_unchanged():
    g0 = funcgrad.grad(model)(W, X)
    with profile() as prof:
        g = funcgrad.grad(model)(W, X)
    assert_close(g, g0)
    names = {e.key for e in prof.key_averages()}
    assert {"tanh", "dot_general", "transpose"} <= names or {"tanh", "dot_general"} <= names


def test_self_and_total_times():
    f = funcgrad.jit(model)
    with profile() as prof:
        with record_function("outer"):
            f(W, X)
    evs = prof.events()
    outer = next(e for e in evs if e.key == "outer")
    inner_total = sum(e.cpu_time_total for e in evs if e.key == "jit(model)")
    assert outer.cpu_time_total >= inner_total
    assert abs(outer.self_cpu_time_total - (outer.cpu_time_total - inner_total)) < 1e-6
    for e in evs:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total + 1e-9


def test_table_sorting_and_shapes():
    with profile(record_shapes=True) as prof:
        model_fnp(W, X)
    table = prof.key_averages().table(sort_by="count", row_limit=3)
    lines = table.splitlines()
    assert "Name" in lines[1] and "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert "Input Shapes" not in lines[1]      # only when grouped by shape, as PyTorch
    assert len([ln for ln in lines if ln and not ln.startswith(("-", "Name", "Self"))]) == 3
    grouped = prof.key_averages(group_by_input_shape=True)
    assert "Input Shapes" in grouped.table().splitlines()[1]
    assert any(e.key == "dot_general" and e.input_shapes == [[5, 4], [4, 3]] for e in grouped)
    with pytest.raises(ValueError, match="sort_by"):
        prof.key_averages().table(sort_by="nonsense")
    assert EventList().table() == "No events recorded."


def test_chrome_trace(tmp_path):
    with profile(record_shapes=True) as prof:
        with record_function("block"):
            funcgrad.jit(model)(W, X)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    evs = data["traceEvents"]
    assert {e["ph"] for e in evs} == {"X"}
    assert any(e["name"] == "block" and e["cat"] == "user_annotation" for e in evs)
    tanh = next(e for e in evs if e["name"] == "tanh")
    assert tanh["args"]["Input Dims"] == [[5, 3]] and tanh["dur"] >= 0


def test_inactive_outside_and_record_function_noop():
    with record_function("nothing"):
        pass
    with profile():
        pass
    assert current_trace() is eval_trace
    with profile(enabled=False) as prof:
        model_fnp(W, X)
    assert len(prof.events()) == 0


def test_with_stack_records_user_lines():
    with profile(with_stack=True) as prof:
        model_fnp(W, X)
        funcgrad.jit(model)(W, X)
    eager = next(e for e in prof.events() if e.key == "tanh")
    assert "test_profiler.py" in eager.source and "model_fnp" in eager.source
    jitted = [e for e in prof.events() if e.key == "dot_general"][-1]
    assert "test_profiler.py" in jitted.source


def test_schedule_matches_pytorch():
    from funcgrad.profiler import schedule

    # torch 2.13's torch.profiler.schedule, recorded
    s = schedule(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    assert [s(i).name for i in range(12)] == [
        "NONE", "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE", "NONE", "WARMUP", "RECORD",
        "RECORD_AND_SAVE", "NONE", "NONE", "NONE"]
    with pytest.warns(UserWarning, match="Profiler won't be using warmup, this can skew"):
        s = schedule(wait=2, warmup=0, active=1, skip_first=1, skip_first_wait=1)
    assert [s(i).name for i in range(8)] == [
        "NONE", "RECORD_AND_SAVE", "NONE", "NONE", "RECORD_AND_SAVE", "NONE", "NONE",
        "RECORD_AND_SAVE"]
    with pytest.raises(ValueError, match="active=0"):
        schedule(wait=0, warmup=0, active=0)
    with pytest.raises(AssertionError, match=r"wait=-1 \(need >= 0\)"):  # PyTorch asserts
        schedule(wait=-1, warmup=1, active=1)


def test_scheduled_profile_records_active_steps_and_hands_each_cycle_over(tmp_path):
    from funcgrad.profiler import profile, schedule, tensorboard_trace_handler

    cycles = []
    handler = tensorboard_trace_handler(str(tmp_path), worker_name="w")

    def ready(prof):
        cycles.append({e.key: e.count for e in prof.key_averages()})
        handler(prof)

    x = np.ones(3)
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                 on_trace_ready=ready) as prof:
        for step in range(6):
            for _ in range(step + 1):        # step k runs k + 1 sin's
                fnp.sin(x)
            prof.step()
    # steps 2 and 3 are active: 3 + 4 sin's, one cycle handed over, at its last step;
    # each active step is a ProfilerStep range (torch 2.13: events named 'ProfilerStep*',
    # trace names 'ProfilerStep#2'/'#3', the step's operations nested in it)
    assert cycles == [{"ProfilerStep*": 2, "sin": 7}]
    assert prof.step_num == 6
    steps = [e for e in prof.events() if e.name == "ProfilerStep*"]
    assert [e.trace_name for e in steps] == ["ProfilerStep#2", "ProfilerStep#3"]
    assert all(e.cpu_parent is steps[0] or e.cpu_parent is steps[1]
               for e in prof.events() if e.name == "sin")
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 1 and files[0].startswith("w.") and files[0].endswith(
        ".pt.trace.json")
    names = [e["name"] for e in json.loads((tmp_path / files[0]).read_text())["traceEvents"]]
    assert names.count("ProfilerStep#2") == 1 and names.count("ProfilerStep#3") == 1
    # without a schedule everything is recorded, and handed over once at the end
    cycles.clear()
    with profile(on_trace_ready=ready) as prof:
        fnp.sin(x)
        prof.step()
        fnp.sin(x)
    assert cycles == [{"sin": 2}]


def test_profile_memory_counts_result_bytes_and_nests():
    # profile_memory=True (PyTorch's memory recipe): each operation's results count as its
    # self memory, a range or jitted call holds the memory of what ran inside it.
    x, w = np.ones((8, 16), np.float32), np.ones((16, 8), np.float32)
    f = funcgrad.jit(lambda a, b: fnp.sin(a) @ b + 1.0)
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            fnp.sin(x)                       # 8*16*4 bytes
            f(x, w)                          # sin 512, dot 8*8*4, add 8*8*4
    by_key = {e.key: e for e in prof.key_averages()}
    assert by_key["sin"].count == 2
    assert by_key["sin"].self_cpu_memory_usage == 2 * 512
    assert by_key["dot_general"].self_cpu_memory_usage == 256
    assert by_key["add"].self_cpu_memory_usage == 256
    call = next(e for k, e in by_key.items() if k.startswith("jit"))
    assert (call.self_cpu_memory_usage, call.cpu_memory_usage) == (0, 512 + 256 + 256)
    assert (by_key["block"].self_cpu_memory_usage, by_key["block"].cpu_memory_usage) == \
        (0, 2 * 512 + 256 + 256)
    table = prof.key_averages().table(sort_by="self_cpu_memory_usage", row_limit=1)
    header, first = table.splitlines()[1], table.splitlines()[3]
    assert "CPU Mem" in header and "Self CPU Mem" in header
    assert first.startswith("sin") and "1.00 Kb" in first
    prof.key_averages().table(sort_by="cpu_memory_usage")


def test_memory_columns_only_when_profiled():
    with profile() as prof:
        fnp.sin(np.ones(3))
    assert "CPU Mem" not in prof.key_averages().table()
    assert prof.key_averages()[0].cpu_memory_usage == 0


def test_events_link_parents_children_and_time_ranges():
    # torch.profiler's FunctionEvent: cpu_parent / cpu_children, time_range.elapsed_us(),
    # cpu_time and the formatted *_str times
    with profile() as prof:
        with record_function("outer"):
            fnp.sin(np.ones(3))
            fnp.cos(np.ones(3))
    outer = next(e for e in prof.events() if e.name == "outer")
    assert outer.cpu_parent is None and outer.is_user_annotation
    assert [c.name for c in outer.cpu_children] == ["sin", "cos"]
    assert all(c.cpu_parent is outer and not c.is_user_annotation for c in outer.cpu_children)
    r = outer.time_range
    assert r.start <= outer.cpu_children[0].time_range.start <= r.end
    assert r.elapsed_us() == pytest.approx(outer.cpu_time_total) == outer.cpu_time
    assert outer.cpu_time_total_str.endswith(("us", "ms", "s"))
    avg = prof.key_averages()[0]
    assert avg.self_cpu_time_total_str and avg.cpu_time_str


def test_export_stacks_for_flame_graphs(tmp_path):
    # PyTorch's flame-graph recipe: prof.export_stacks(path, "self_cpu_time_total") writes
    # "frame;...;frame value" lines; here the frames are the enclosing ranges / jitted calls,
    # the source line, then the operation
    f = funcgrad.jit(lambda a: fnp.cos(a) * 2.0)
    with profile(with_stack=True) as prof:
        with record_function("train step"):
            fnp.sin(np.ones(50_000))
            f(np.ones(50_000))
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    lines = path.read_text().splitlines()
    stacks = {}
    for ln in lines:
        stack, value = ln.rsplit(" ", 1)
        assert int(value) > 0
        stacks[stack.split(";")[-1]] = stack.split(";")
    assert stacks["sin"][0] == "train_step" and "test_profiler.py" in stacks["sin"][1]
    assert stacks["cos"][0] == "train_step" and stacks["cos"][1].startswith("jit")
    assert all(" " not in frame for st in stacks.values() for frame in st)
    with pytest.raises(ValueError, match="export_stacks"):
        prof.export_stacks(str(path), "cpu_time_total")


def test_legacy_autograd_profiler_attributes():
    # torch.autograd.profiler.profile's: function_events, self_cpu_time_total,
    # total_average(); EventList.key_averages() and .self_cpu_time_total
    with profile() as prof:
        fnp.sin(np.ones(3))
        fnp.sin(np.ones(3))
        fnp.cos(np.ones(3))
    events = prof.function_events
    assert [e.name for e in events] == ["sin", "sin", "cos"]
    assert prof.self_cpu_time_total == pytest.approx(sum(e.self_cpu_time_total for e in events))
    assert events.self_cpu_time_total == pytest.approx(prof.self_cpu_time_total)
    assert prof.total_average().count == 3
    assert [(a.key, a.count) for a in events.key_averages()] == [("sin", 2), ("cos", 1)]
    assert [(a.key, a.count) for a in prof.key_averages()] == [("sin", 2), ("cos", 1)]


def test_record_function_range_has_empty_input_shapes_when_recording_shapes():
    # torch.profiler: a record_function event's input_shapes is [] with record_shapes=True
    with profile(record_shapes=True) as prof:
        with record_function("block"):
            fnp.sin(np.ones(3))
    shapes = {e.name: e.input_shapes for e in prof.events()}
    assert shapes == {"block": [], "sin": [[3]]}


def test_supported_activities_is_host_time():
    from funcgrad.profiler import ProfilerActivity, supported_activities

    acts = supported_activities()
    assert acts == {ProfilerActivity.CPU}
    with profile(activities=acts) as prof:        # PyTorch's idiom
        fnp.sin(np.ones(3))
    assert [e.key for e in prof.key_averages()] == ["sin"]


@pytest.mark.parametrize("transform", [lambda f: f, funcgrad.jit])
def test_with_flops_counts_matmuls_and_elementwise_work_as_torch(transform):
    # torch 2.13, profile(with_flops=True) over y = x @ w (x 8x64, w 64x32) then y * 2 + 1:
    # aten::mm 32768 flops (2*M*N*K), aten::mul 256, aten::add 256; the table gets a
    # "Total FLOPs" column ("--" where none), sortable by "flops"
    from helpers import dev

    x, w = dev(np.ones((8, 64))), dev(np.ones((64, 32)))
    f = transform(lambda x, w: fnp.add(fnp.multiply(fnp.matmul(x, w), 2.0), 1.0))
    with profile(with_flops=True) as prof:
        f(x, w)
    flops = {e.key: e.flops for e in prof.key_averages()}
    assert flops["dot_general"] == 32768 and flops["mul"] == 256 and flops["add"] == 256
    assert all(v == 0 for k, v in flops.items() if k.startswith("jit"))  # not counted twice
    table = prof.key_averages().table(sort_by="flops")
    header, first = table.splitlines()[1], table.splitlines()[3]
    assert header.rstrip().endswith("Total FLOPs") and first.startswith("dot_general")
    assert first.rstrip().endswith("32768.000")
    with profile() as plain:          # off by default: no column
        f(x, w)
    assert "FLOPs" not in plain.key_averages().table()


def _blocked(x):
    with record_function("block_a"):
        y = fnp.sin(x) * 2.0
    return fnp.sum(fnp.cos(y))


def test_record_function_ranges_inside_jit_show_in_every_profiled_call():
    # torch keeps record_function ranges in compiled code; a jitted function's ranges were
    # seen only while it was traced (timing the trace), not when it ran
    from funcgrad.profiler import schedule

    f = funcgrad.jit(_blocked)
    seen = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: seen.append(p)) as prof:
        for _ in range(5):
            f(X)       # traced in the (not recording) wait step
            prof.step()
    (p,) = seen
    counts = {e.key: e.count for e in p.key_averages()}
    assert counts["block_a"] == 2 and counts["jit(_blocked)"] == 2 and counts["sin"] == 2
    block = next(e for e in p.events() if e.name == "block_a")
    assert [c.name for c in block.cpu_children] == ["sin", "mul"]
    assert block.cpu_parent.name == "jit(_blocked)" and block.is_user_annotation
    assert "debug_callback" not in counts          # the markers are not events
    # under grad and vmap too
    with profile() as prof:
        funcgrad.vmap(funcgrad.grad(_blocked))(np.ones((3, 4)))
    assert {e.key: e.count for e in prof.key_averages()}["block_a"] == 1
    # a function traced outside any profile gets no markers (nothing added to its code)
    closed = funcgrad.make_jaxpr(_blocked)(X)
    assert "debug_callback" not in [e.prim.name for e in closed.jaxpr.eqns]
    assert_close(f(X), _blocked(X))


def test_table_top_level_events_only_as_torch():
    # torch: table(top_level_events_only=True) lists only events not nested in another
    # (here the record_function range and the jitted call, not the operations inside); the
    # option was accepted and ignored
    f = funcgrad.jit(lambda x: fnp.sum(fnp.sin(x)))
    f(X)
    with profile() as prof:
        with record_function("outer"):
            f(X)
        fnp.cos(X)
    def names(table):  # the rows between the header's rule and the closing one
        lines = table.splitlines()
        rules = [i for i, ln in enumerate(lines) if ln.startswith("-")]
        return {ln.split()[0] for ln in lines[rules[1] + 1:rules[2]]}

    table = prof.key_averages().table(top_level_events_only=True, header="HDR")
    assert names(table) == {"outer", "cos"}
    # torch 2.13's banner: a rule of '=' as wide as the table above the header, another
    # above the top-level note
    lines = table.splitlines()
    assert lines[1] == "HDR" and lines[3] == "This report only display top-level ops statistics"
    assert lines[0] == lines[2] == "=" * len(lines[4]) and set(lines[4]) == {"-", " "}
    assert {"sin", "reduce_sum"} <= names(prof.key_averages().table())


def test_events_have_torchs_device_attributes_as_zero():
    # scripts written for torch read e.device_time_total / e.cuda_time_total (0 on a CPU run)
    with profile() as prof:
        fnp.sin(X)
    for e in (prof.events()[0], prof.key_averages()[0]):
        assert e.device_time_total == 0 and e.self_cuda_time_total == 0
        assert e.device_memory_usage == 0 and e.device_type == "CPU"
        assert e.device_time_total_str == "0.000us"


def test_with_stack_events_have_stacks_grouped_by_key_averages():
    # torch 2.13: with_stack=True gives each operation its frames (FunctionEvent.stack);
    # key_averages(group_by_stack_n=n) splits a name by its first n frames and the table
    # gets a "Source Location" column (group_by_stack_n was ignored here, stack missing)
    x = np.ones(3)
    with profile(with_stack=True) as prof:
        for _ in range(2):
            fnp.sin(x)
        fnp.sin(x)
    lines = {e.stack[0] for e in prof.events()}
    assert len(lines) == 2 and all("test_profiler.py" in f for f in lines)
    assert [e.count for e in prof.key_averages()] == [3]
    by_line = prof.key_averages(group_by_stack_n=1)
    assert sorted(e.count for e in by_line) == [1, 2]
    assert all(len(e.stack) == 1 for e in by_line)
    table = by_line.table()
    assert "Source Location" in table and all(f[-40:] in table for f in lines)
    assert "Source Location" not in prof.key_averages().table()
    with profile() as quiet:       # without with_stack: no frames
        fnp.sin(x)
    assert [e.stack for e in quiet.events()] == [[]]


def test_print_of_a_profile_is_its_event_table():
    # torch 2.13's torch.autograd.profiler.profile: print(prof) prints the events' table
    # (here it printed the object's repr)
    with profile() as prof:
        fnp.sin(np.ones(3))
    text = str(prof)
    assert text.splitlines()[1].split()[:3] == ["Name", "Self", "CPU"] and "sin" in text


def test_jax_trace_names_write_a_gzipped_chrome_trace(tmp_path):
    # jax.profiler.trace / start_trace / stop_trace, TraceAnnotation, StepTraceAnnotation,
    # annotate_function: JAX's run directory layout, ranges named as its trace viewer does
    from funcgrad import profiler as P

    f = funcgrad.jit(lambda x: P.annotate_function(fnp.sin, name="s")(x) * 2)
    with P.trace(tmp_path, create_perfetto_trace=True):
        for i in range(2):
            with P.StepTraceAnnotation("train", step_num=i):
                f(dev(np.ones(3)))
    (run,) = glob.glob(str(tmp_path / "plugins" / "profile" / "*"))
    names = sorted(os.listdir(run))
    assert names[0] == "perfetto_trace.json.gz" and names[1].endswith(".trace.json.gz")
    events = json.load(gzip.open(os.path.join(run, names[1])))["traceEvents"]
    assert {"train#step_num=0#", "train#step_num=1#", "s", "sin", "mul"} <= {
        e["name"] for e in events}
    with pytest.raises(RuntimeError, match="No profile started"):
        P.stop_trace()
    P.start_trace(tmp_path)
    with pytest.raises(RuntimeError, match="already been started"):
        P.start_trace(tmp_path)
    P.stop_trace()


def test_export_memory_timeline_files_as_pytorch(tmp_path):
    # PyTorch's export_memory_timeline: .json plot points [times (us), bytes per category],
    # .raw.json.gz events (ns, action, bytes, category), .json.gz, and its ValueError
    from helpers import DEVICE

    x, w = dev(np.ones(1000)), dev(np.ones(1000, np.float32))
    with profile(record_shapes=True, profile_memory=True, with_stack=True) as prof:
        y = fnp.sin(x)      # x read (preexisting), y made: 8000 bytes each
        z = fnp.cos(w)      # w read, z made: 4000 bytes each
        del y               # freed while recording
    del z                   # freed after: not on the timeline
    prof.export_memory_timeline(tmp_path / "m.raw.json.gz", device=DEVICE)
    raw = json.load(gzip.open(tmp_path / "m.raw.json.gz", "rt"))
    # PREEXISTING 1, CREATE 2, DESTROY 4 (PyTorch's Action values); category 7: unknown
    assert [(a, n, c) for _, a, n, c in raw] == [
        (1, 8000, 7), (1, 4000, 7), (2, 8000, 7), (2, 4000, 7), (4, -8000, 7)]
    assert raw[0][0] == raw[1][0] == -1 and raw[2][0] <= raw[3][0] <= raw[4][0]
    prof.export_memory_timeline(str(tmp_path / "m.json"), device=DEVICE)
    times, sizes = json.load(open(tmp_path / "m.json"))
    assert times == sorted(times) and all(len(s) == 9 and not any(s[:8]) for s in sizes)
    assert sizes[-1][8] == 16000 and max(s[8] for s in sizes) == 24000
    prof.export_memory_timeline(tmp_path / "m.json.gz", device=DEVICE)
    assert json.load(gzip.open(tmp_path / "m.json.gz", "rt")) == [times, sizes]
    with profile(profile_memory=True) as bare:
        fnp.sin(x)
    with pytest.raises(ValueError, match=r"^record_shapes=True, with_stack=True required for "
                                         r"memory profiling\.$"):
        bare.export_memory_timeline(tmp_path / "n.json")
