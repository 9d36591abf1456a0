"""The PyTorch side of tests/bench/onnx-vs-torch.sh.

    onnx_vs_torch.py export OUT SIZE BATCH
        torchvision's resnet18 and mobilenet_v2 (random weights, seeded,
        random batch-norm statistics (vary), eval mode) to OUT/NAME.onnx (opset 17, symbolic batch), a seeded
        random batch to OUT/NAME.in.f32, PyTorch's log-probabilities to
        OUT/NAME.torch.f32 and onnxruntime's (where it imports) to
        OUT/NAME.ort.f32, all raw float32.
    onnx_vs_torch.py compare OUT NAME BACKEND
        OUT/NAME.BACKEND.f32 (dlbench's) against both; exit 1 when a value
        is off by more than 1e-3 * max(1, |peer|) or a top-1 class differs,
        or when the peer's log-probabilities hardly vary (std under 1e-2
        for an image): equal numbers prove nothing.
"""
import os
import sys

import numpy as np

TOL = 1e-3
MODELS = ("resnet18", "mobilenet_v2")


def log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def vary(net, seed):
    """Random statistics and affine parameters for every batch norm, and
    larger random classifier weights: with torchvision's own init (running
    mean 0, variance 1, beta 0, classifier N(0, 0.01) and bias 0)
    MobileNetV2's logits come out equal to float precision, and a
    comparison of equal numbers would see nothing."""
    import torch
    g = torch.Generator().manual_seed(1000 + seed)
    with torch.no_grad():
        for mod in net.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.weight.uniform_(0.5, 1.5, generator=g)
                mod.bias.normal_(0, 0.1, generator=g)
                mod.running_mean.normal_(0, 0.1, generator=g)
                mod.running_var.uniform_(0.5, 1.5, generator=g)
            elif isinstance(mod, torch.nn.Linear):
                mod.weight.normal_(0, 0.05, generator=g)
                mod.bias.normal_(0, 0.1, generator=g)


def export(out, size, batch):
    import torch
    import torchvision
    for i, name in enumerate(MODELS):
        torch.manual_seed(i)
        net = getattr(torchvision.models, name)(weights=None).eval()
        vary(net, i)
        x = torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(100 + i))
        path = os.path.join(out, name + ".onnx")
        kw = dict(opset_version=17, input_names=["image"], output_names=["logits"],
                  dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}},
                  do_constant_folding=True)
        try:  # the TorchScript exporter where the dynamo one became default
            torch.onnx.export(net, (x,), path, dynamo=False, **kw)
        except TypeError:
            torch.onnx.export(net, (x,), path, **kw)
        with torch.no_grad():
            logits = net(x).double().numpy()
        x.numpy().astype("<f4").tofile(os.path.join(out, name + ".in.f32"))
        log_softmax(logits).astype("<f4").tofile(os.path.join(out, name + ".torch.f32"))
        try:
            import onnxruntime as ort
        except ImportError:
            print("onnx_vs_torch.py: onnxruntime does not import: comparing "
                  "with PyTorch only", file=sys.stderr)
            continue
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        y = sess.run(None, {"image": x.numpy()})[0].astype(np.float64)
        log_softmax(y).astype("<f4").tofile(os.path.join(out, name + ".ort.f32"))


def compare(out, name, backend):
    got = np.fromfile(os.path.join(out, "%s.%s.f32" % (name, backend)), "<f4").astype(np.float64)
    ok = True
    for peer in ("torch", "ort"):
        path = os.path.join(out, "%s.%s.f32" % (name, peer))
        if not os.path.exists(path):
            continue
        want = np.fromfile(path, "<f4").astype(np.float64)
        if got.size != want.size:
            print("%s on %s vs %s: %d values, expected %d" % (name, backend, peer, got.size,
                                                          want.size))
            ok = False
            continue
        g, w = got.reshape(-1, 1000), want.reshape(-1, 1000)
        if w.std(1).min() < 1e-2:
            print("%s vs %s: the peer's log-probabilities hardly vary (std %.3g): "
                  "the comparison would see nothing" % (name, peer, w.std(1).min()))
            ok = False
            continue
        err = np.abs(g - w) / np.maximum(1.0, np.abs(w))
        top = (g.argmax(1) == w.argmax(1)).all()
        good = err.max() <= TOL and top
        print("%s on %s vs %s: max relative difference %.3g (tolerance %g), top-1 %s: %s"
              % (name, backend, peer, err.max(), TOL, "same" if top else "DIFFERS",
                 "ok" if good else "FAIL"))
        ok = ok and good
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "export":
        export(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif not compare(sys.argv[2], sys.argv[3], sys.argv[4]):
        sys.exit(1)
