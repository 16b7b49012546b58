"""The profiler, as PyTorch/XLA's `torch_xla.debug.profiler` (`import torch_xla.debug.profiler as xp`).

One timeline per process: host tracing (each recorded op), graph cuts, lowering, compilation
(passes, code generation, the C++ compiler), execution on each device's thread, transfers and CPU
fallbacks, plus the user's own `Trace` / `StepTrace` regions. A capture is written as Chrome
trace-event JSON (`<logdir>/plugins/profile/<time>/<host>_<pid>.trace.json`), which Perfetto
(ui.perfetto.dev) and chrome://tracing open; traces of several replica processes line up on the
wall clock.

    server = xp.start_server(9012)                 # in the training process
    xp.trace('localhost:9012', '/tmp/logs', duration_ms=2000)       # from anywhere: capture 2 s
    xp.trace_detached('localhost:9012', '/tmp/logs', duration_ms=2000)  # the same, in a thread

    xp.start_trace('/tmp/logs'); ...; xp.stop_trace()   # or capture a region of this process

    with xp.StepTrace('train_step', step_num=step):     # a step: ends with torch_xla.sync()
        with xp.Trace('forward'):
            ...
"""
import datetime
import functools
import http.server
import json
import os
import socket
import threading
import time
import urllib.parse
import urllib.request

import torch_xla
from torch_xla import _XLAC

__all__ = ['Trace', 'StepTrace', 'trace_me', 'start_server', 'trace', 'trace_detached', 'start_trace',
           'stop_trace', 'ProfilerServer']

_capture_lock = threading.Lock()


def _capture(duration_ms, delay_ms=0):
    """Records this process's timeline for `duration_ms` (after `delay_ms`): the JSON text."""
    with _capture_lock:
        if delay_ms:
            time.sleep(delay_ms / 1000)
        _XLAC._xla_start_trace()
        try:
            time.sleep(duration_ms / 1000)
        finally:
            text = _XLAC._xla_stop_trace()
    return text


def _write(logdir, text, label):
    stamp = datetime.datetime.now().strftime('%Y_%m_%d_%H_%M_%S_%f')
    folder = os.path.join(logdir, 'plugins', 'profile', stamp)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f'{socket.gethostname()}_{label}.trace.json')
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        f.write(text)
    os.replace(tmp, path)
    return path


class _Handler(http.server.BaseHTTPRequestHandler):

    def do_GET(self):  # noqa: N802 (http.server's name)
        url = urllib.parse.urlparse(self.path)
        if url.path != '/capture':
            self.send_error(404, 'GET /capture?duration_ms=N captures this process\'s timeline')
            return
        query = urllib.parse.parse_qs(url.query)
        try:
            duration_ms = float(query.get('duration_ms', ['1000'])[0])
            delay_ms = float(query.get('delay_ms', ['0'])[0])
        except ValueError:
            self.send_error(400, 'duration_ms and delay_ms are numbers of milliseconds')
            return
        body = _capture(duration_ms, delay_ms).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet: a capture is not an event worth a log line
        pass


class ProfilerServer:
    """A capture service on 127.0.0.1:`port` in this process (a daemon thread); `stop()` ends it."""

    def __init__(self, port):
        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', port), _Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name='xla profiler server',
                                        daemon=True)
        self._thread.start()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()


_servers = {}


def start_server(port, only_on_master=True):
    """Starts the capture service of this process on `port` (0: any free port; see `.port`).
    With `only_on_master`, replica processes other than the master start none and get None."""
    if only_on_master:
        from torch_xla import runtime as xr
        if xr.global_ordinal() != 0:
            return None
    if port in _servers:
        return _servers[port]
    server = ProfilerServer(port)
    _servers[server.port] = server
    return server


def trace(service_addr, logdir, duration_ms=1000, num_tracing_attempts=3, host_tracer_level=2,
          device_tracer_level=1, delay_ms=0, timeout_s=120, **kwargs):
    """Captures `duration_ms` of the timeline of the process serving `service_addr` ('host:port',
    started with `start_server`) into `logdir`; returns the file written. The tracer levels are
    accepted for PyTorch/XLA's callers: this timeline always holds host and device spans."""
    del host_tracer_level, device_tracer_level, kwargs
    if '://' in service_addr:
        service_addr = service_addr.split('://', 1)[1]
    host, _, port = service_addr.rpartition(':')
    url = f'http://{host or "localhost"}:{int(port)}/capture?duration_ms={duration_ms}&delay_ms={delay_ms}'
    last = None
    for _ in range(max(1, num_tracing_attempts)):
        try:
            with urllib.request.urlopen(url, timeout=timeout_s + (duration_ms + delay_ms) / 1000) as reply:
                text = reply.read().decode()
            pid = json.loads(text)['traceEvents'][0]['pid']
            return _write(logdir, text, str(pid))
        except OSError as error:
            last = error
            time.sleep(0.2)
    raise RuntimeError(f'profiler capture from {service_addr} failed after {num_tracing_attempts} attempt(s): '
                       f'{last} (is xp.start_server({port}) running there?)')


def trace_detached(service_addr, logdir, duration_ms=1000, num_tracing_attempts=3, host_tracer_level=2,
                   device_tracer_level=1, delay_ms=0, timeout_s=120, **kwargs):
    """`trace` in a background thread (returned), so the caller keeps training meanwhile."""
    thread = threading.Thread(
        target=trace, name='xla profiler capture',
        args=(service_addr, logdir, duration_ms, num_tracing_attempts, host_tracer_level, device_tracer_level,
              delay_ms, timeout_s),
        kwargs=kwargs, daemon=True)
    thread.start()
    return thread


_local_trace = {}


def start_trace(log_dir):
    """Starts capturing this process's timeline; `stop_trace()` writes it under `log_dir`."""
    if _local_trace:
        raise RuntimeError('Only one profile may be run at a time: a trace is already being captured '
                           '(xp.stop_trace() ends it)')
    _capture_lock.acquire()
    _local_trace['dir'] = log_dir
    _XLAC._xla_start_trace()


def stop_trace():
    """Ends the capture `start_trace` began; returns the file written."""
    if not _local_trace:
        raise RuntimeError('No profile started: no trace is being captured (xp.start_trace(log_dir) begins one)')
    try:
        text = _XLAC._xla_stop_trace()
        return _write(_local_trace.pop('dir'), text, str(os.getpid()))
    finally:
        _capture_lock.release()


_scopes = threading.local()


def _open_scopes():
    """The Trace scopes this thread is inside, outermost first ('name.<n>')."""
    if not hasattr(_scopes, 'stack'):
        _scopes.stack, _scopes.count = [], 0
    return _scopes.stack


def _check_no_open_scope():
    """A barrier (torch_xla.sync(), xm.mark_step() with reset_scope) inside a Trace is an error in
    PyTorch/XLA: the step's graph would be cut in the middle of the region. StepTrace ends its
    own scope before its barrier."""
    stack = _open_scopes()
    if stack:
        raise RuntimeError(f'Expecting scope to be empty but it is {"/".join(stack)}')


class Trace:
    """A named region of host time on the timeline (a context manager), with `kwargs` shown as
    its arguments. A barrier inside it raises, as in PyTorch/XLA."""

    def __init__(self, name, **kwargs):
        self.name = name
        self.args = {k: str(v) for k, v in kwargs.items()}

    def __enter__(self):
        stack = _open_scopes()
        _scopes.count += 1
        stack.append(f'{self.name}.{_scopes.count}')
        _XLAC._xla_push_trace(self.name, self.args)
        return self

    def _end_scope(self):
        stack = _open_scopes()
        if stack:
            stack.pop()

    def __exit__(self, exc_type, exc, tb):
        self._end_scope()
        _XLAC._xla_pop_trace()
        return False


class StepTrace(Trace):
    """A training step's region: `step_num` is shown with it, and leaving it is a barrier
    (torch_xla.sync()), as in PyTorch/XLA."""

    def __exit__(self, exc_type, exc, tb):
        self._end_scope()
        try:
            if exc_type is None:
                torch_xla.sync()
        finally:
            _XLAC._xla_pop_trace()
        return False


def trace_me(name):
    """A decorator: every call of the function is a `Trace(name)` region."""

    def decorator(fn):

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with Trace(name):
                return fn(*args, **kwargs)

        return wrapper

    return decorator
