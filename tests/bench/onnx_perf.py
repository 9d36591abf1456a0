"""Helper of tests/bench/onnx-perf.sh (run with a Python that has torch,
torchvision and onnxruntime): export a torchvision network to ONNX, or
time its fp32 inference in PyTorch eager or onnxruntime on the CPU.

  onnx_perf.py export NET FILE.onnx
  onnx_perf.py time torch|ort NET FILE.onnx BATCH SECONDS THREADS

`time` runs in its own process (one process per measurement, as dlbench
does), warms up for a second, then times single inference calls until
SECONDS have passed (at least 10 calls) and prints one JSON line: the
median, p10 and p90 of the call times in seconds and the call count."""
import json, statistics, sys, time

import numpy as np
import torch
import torchvision


def net(name):
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(weights=None)
    return m.eval()


def export(name, path):
    m = net(name)
    x = torch.randn(1, 3, 224, 224)
    torch.onnx.export(m, x, path, opset_version=17, input_names=['input'],
                      output_names=['logits'], dynamic_axes={'input': {0: 'n'}, 'logits': {0: 'n'}},
                      dynamo=False)


def timed(call, seconds):
    t_end = time.perf_counter() + 1.0
    while time.perf_counter() < t_end:
        call()
    times = []
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end or len(times) < 10:
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(p * len(times)))]
    return {'median_s': statistics.median(times), 'p10_s': q(0.1), 'p90_s': q(0.9), 'calls': len(times)}


def main():
    if sys.argv[1] == 'export':
        export(sys.argv[2], sys.argv[3])
        return
    _, _, who, name, path, batch, seconds, threads = sys.argv
    batch, seconds, threads = int(batch), float(seconds), int(threads)
    x = np.random.default_rng(1).standard_normal((batch, 3, 224, 224), dtype=np.float32)
    if who == 'torch':
        torch.set_num_threads(threads)
        m = net(name)
        xt = torch.from_numpy(x)
        def call():
            with torch.inference_mode():
                m(xt)
    else:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        s = ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])
        def call():
            s.run(None, {'input': x})
    r = timed(call, seconds)
    r.update({'who': who, 'net': name, 'batch': batch, 'threads': threads,
              'version': torch.__version__ if who == 'torch' else __import__('onnxruntime').__version__})
    print(json.dumps(r))


main()
