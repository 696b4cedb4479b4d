"""A small client for Triton Inference Server's HTTP/REST (KServe V2)
protocol, over the standard library and numpy, with tensors in the binary
data extension (exact, and cheap to parse); and a helper that starts and
stops a tritonserver on 127.0.0.1.

Used by serving/triton/tests/test_triton.py and bench/triton_load.py.
"""

import http.client
import importlib.util
import json
import os
import signal
import socket
import subprocess
import time

import numpy as np

NP_TO_TRITON = {
    np.dtype(np.float32): "FP32",
    np.dtype(np.float16): "FP16",
    np.dtype(np.float64): "FP64",
    np.dtype(np.int8): "INT8",
    np.dtype(np.uint8): "UINT8",
    np.dtype(np.int16): "INT16",
    np.dtype(np.int32): "INT32",
    np.dtype(np.int64): "INT64",
    np.dtype(np.bool_): "BOOL",
}
TRITON_TO_NP = {v: k for k, v in NP_TO_TRITON.items()}


def find_tritonserver():
    """The tritonserver binary: $TRITONSERVER, else the one nvidia-pytriton
    bundles in this interpreter's environment; None if neither."""
    path = os.environ.get("TRITONSERVER")
    if path:
        return path if os.access(path, os.X_OK) else None
    spec = importlib.util.find_spec("pytriton")
    if spec is None or not spec.submodule_search_locations:
        return None
    for base in spec.submodule_search_locations:
        path = os.path.join(base, "tritonserver", "bin", "tritonserver")
        if os.access(path, os.X_OK):
            return path
    return None


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """tritonserver on 127.0.0.1 with HTTP on a free port (gRPC on another,
    metrics off), its log in log_path."""

    def __init__(self, binary, repo, backend_dir, log_path, verbose=0, extra=(), env=None):
        self.http_port = free_port()
        self.grpc_port = free_port()
        while self.grpc_port == self.http_port:
            self.grpc_port = free_port()
        self.log_path = log_path
        args = [
            binary,
            "--model-repository", repo,
            "--backend-directory", backend_dir,
            "--http-address", "127.0.0.1", "--http-port", str(self.http_port),
            "--grpc-address", "127.0.0.1", "--grpc-port", str(self.grpc_port),
            "--allow-metrics", "false",
            "--exit-on-error", "false",
            "--strict-readiness", "false",
            "--log-verbose", str(verbose),
            *extra,
        ]
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)

    def wait_ready(self, timeout=120.0):
        """Waits until the server answers /v2/health/ready (every model has
        been tried). False if it died or the time ran out."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            try:
                status, _ = self.get("/v2/health/ready")
                if status == 200:
                    return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    def connection(self):
        return http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=60)

    def get(self, path):
        c = self.connection()
        try:
            c.request("GET", path)
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def post(self, path, body=b"{}"):
        c = self.connection()
        try:
            c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def stats(self, model):
        status, body = self.get("/v2/models/%s/stats" % model)
        assert status == 200, body
        s = json.loads(body)["model_stats"][0]
        return int(s.get("inference_count", 0)), int(s.get("execution_count", 0))

    def repository_index(self):
        status, body = self.post("/v2/repository/index")
        assert status == 200, body
        return {m["name"]: m for m in json.loads(body)}

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")


def encode(inputs, outputs=None, datatypes=None):
    """The body and headers of an inference request: `inputs` maps names to
    arrays; `datatypes` may override an input's protocol type name."""
    datatypes = datatypes or {}
    header = {"inputs": []}
    blobs = []
    for name, arr in inputs.items():
        arr = np.ascontiguousarray(arr)
        raw = arr.tobytes()
        header["inputs"].append({
            "name": name,
            "shape": list(arr.shape),
            "datatype": datatypes.get(name, NP_TO_TRITON[arr.dtype]),
            "parameters": {"binary_data_size": len(raw)},
        })
        blobs.append(raw)
    if outputs is not None:
        header["outputs"] = [{"name": n, "parameters": {"binary_data": True}} for n in outputs]
    else:
        header["parameters"] = {"binary_data_output": True}
    head = json.dumps(header).encode()
    return head + b"".join(blobs), {
        "Content-Type": "application/octet-stream",
        "Inference-Header-Content-Length": str(len(head)),
    }


def decode(status, headers, body):
    """(outputs as a dict of arrays, None) on success, (None, message) on an
    error response."""
    hlen = headers.get("Inference-Header-Content-Length")
    head = body[: int(hlen)] if hlen is not None else body
    try:
        doc = json.loads(head)
    except ValueError:
        return None, "HTTP %d: %r" % (status, body[:200])
    if status != 200:
        return None, doc.get("error", "HTTP %d" % status)
    out = {}
    at = len(head)
    for o in doc.get("outputs", []):
        dt = TRITON_TO_NP[o["datatype"]]
        size = o.get("parameters", {}).get("binary_data_size")
        if size is None:
            out[o["name"]] = np.array(o["data"], dtype=dt).reshape(o["shape"])
            continue
        out[o["name"]] = np.frombuffer(body[at : at + size], dtype=dt).reshape(o["shape"])
        at += size
    return out, None


def infer(conn, model, inputs, outputs=None, datatypes=None):
    """One inference over an open HTTPConnection (kept alive)."""
    body, headers = encode(inputs, outputs, datatypes)
    conn.request("POST", "/v2/models/%s/infer" % model, body=body, headers=headers)
    r = conn.getresponse()
    data = r.read()
    return decode(r.status, r.headers, data)
